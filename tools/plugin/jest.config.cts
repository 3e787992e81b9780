module.exports = {
  displayName: 'tools',
  preset: '../../jest.preset.js',
  testEnvironment: 'node',
  // The run's PostgreSQL (libs/testing, tools/jest): the generator's test hands it to the generated HTTP test.
  globalSetup: '../../tools/jest/global-setup.ts',
  globalTeardown: '../../tools/jest/global-teardown.ts',
  transform: {
    '^.+\\.[tj]s$': ['ts-jest', { tsconfig: '<rootDir>/tsconfig.spec.json' }],
  },
  // The templates are not tests of this project (they become tests of the generated workspace).
  testPathIgnorePatterns: ['/node_modules/', '/files/'],
  moduleFileExtensions: ['ts', 'js', 'html'],
  coverageDirectory: '../../coverage/tools/plugin',
};
