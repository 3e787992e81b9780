module.exports = {
  displayName: 'infrastructure',
  preset: '../../jest.preset.js',
  testEnvironment: 'node',
  transform: {
    '^.+\\.[tj]s$': ['ts-jest', { tsconfig: '<rootDir>/tsconfig.spec.json' }],
  },
  // One PostgreSQL per jest process, one database per worker (libs/testing/src/test-database.ts, tools/jest).
  globalSetup: '../../tools/jest/global-setup.ts',
  globalTeardown: '../../tools/jest/global-teardown.ts',
  testTimeout: 30000,
  moduleFileExtensions: ['ts', 'js', 'html'],
  coverageDirectory: '../../coverage/libs/infrastructure',
};
