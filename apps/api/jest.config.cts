module.exports = {
  displayName: 'api',
  preset: '../../jest.preset.js',
  testEnvironment: 'node',
  transform: {
    '^.+\\.[tj]s$': ['ts-jest', { tsconfig: '<rootDir>/tsconfig.spec.json' }],
  },
  // One PostgreSQL per jest process, one database per worker (libs/testing/src/test-database.ts, tools/jest).
  globalSetup: '../../tools/jest/global-setup.ts',
  globalTeardown: '../../tools/jest/global-teardown.ts',
  testTimeout: 30000,
  // @fastify/static 10 (Swagger UI assets) requires content-disposition 3, which is ESM only:
  // let ts-jest turn that one package into CommonJS, as Node itself would load it.
  transformIgnorePatterns: ['/node_modules/(?!content-disposition/)'],
  moduleFileExtensions: ['ts', 'js', 'html'],
  coverageDirectory: '../../coverage/apps/api',
};
