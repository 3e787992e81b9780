module.exports = {
  displayName: 'embedded-postgres',
  preset: '../../jest.preset.js',
  testEnvironment: 'node',
  transform: {
    '^.+\\.[tj]s$': ['ts-jest', { tsconfig: '<rootDir>/tsconfig.spec.json' }],
  },
  // Each spec starts its own PostgreSQL (initdb takes a few seconds on a busy machine).
  testTimeout: 120000,
  moduleFileExtensions: ['ts', 'js', 'html'],
  coverageDirectory: '../../coverage/libs/embedded-postgres',
};
