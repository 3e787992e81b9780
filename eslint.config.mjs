import nx from '@nx/eslint-plugin';

/**
 * Layer rules (docs/architecture.md, Layers). Dependencies point inwards only:
 *   app -> infrastructure -> application -> domain
 * The testing lib (test database) may use every layer; production code may not import it, tests may.
 * The embedded PostgreSQL runner (libs/embedded-postgres, a development and test database) depends on no
 * other lib; the app (its database when DATABASE_URL is unset), the testing lib and tests may import it,
 * the layers' production code may not.
 * The typed HTTP client (libs/client) depends on no other lib and never on the server's code; the app's tests use it.
 */
const APPLICATION_PORTS_ONLY = {
  group: ['typeorm', 'typeorm/*', 'pg', '@nestjs/platform-*', 'class-validator'],
  message: 'libs/application talks to persistence only through its ports.',
};
/**
 * The in-memory fakes, test-data builders and port contract suites (libs/application/testing) are
 * part of the application project, so that its specs and infrastructure's specs share them; production
 * code may not import them.
 */
const NO_TEST_DOUBLES = {
  regex: '^(@petstore/application/testing|(\\.\\./)+testing)(/.*)?$',
  message: 'libs/application/testing (fakes, builders, contract suites) is for tests only.',
};
const TEST_FILES = ['**/*.spec.ts', '**/test/**/*.ts'];
const ALL_LAYERS = ['type:domain', 'type:application', 'type:infrastructure'];
const EMBEDDED = 'type:embedded-postgres';
const CLIENT = 'type:client';
const layerRules = ({ testsMayUseTesting }) => [
  'error',
  {
    enforceBuildableLibDependency: true,
    allow: ['^.*/eslint(\\.base)?\\.config\\.[cm]?[jt]s$'],
    depConstraints: [
      { sourceTag: 'type:domain', onlyDependOnLibsWithTags: ['type:domain'] },
      { sourceTag: 'type:application', onlyDependOnLibsWithTags: ['type:domain', 'type:application'] },
      {
        sourceTag: 'type:infrastructure',
        onlyDependOnLibsWithTags: testsMayUseTesting ? [...ALL_LAYERS, 'type:testing', EMBEDDED] : ALL_LAYERS,
      },
      {
        sourceTag: 'type:app',
        onlyDependOnLibsWithTags: testsMayUseTesting
          ? [...ALL_LAYERS, 'type:testing', EMBEDDED, CLIENT]
          : [...ALL_LAYERS, EMBEDDED],
      },
      { sourceTag: 'type:testing', onlyDependOnLibsWithTags: [...ALL_LAYERS, 'type:testing', EMBEDDED] },
      { sourceTag: EMBEDDED, onlyDependOnLibsWithTags: [EMBEDDED] },
      { sourceTag: CLIENT, onlyDependOnLibsWithTags: testsMayUseTesting ? [CLIENT, 'type:testing'] : [CLIENT] },
    ],
  },
];

export default [
  ...nx.configs['flat/base'],
  ...nx.configs['flat/typescript'],
  ...nx.configs['flat/javascript'],
  {
    ignores: ['**/dist', '**/out-tsc', '**/.data', '**/tmp'],
  },
  {
    files: ['**/*.ts', '**/*.tsx', '**/*.js', '**/*.jsx'],
    rules: {
      '@nx/enforce-module-boundaries': layerRules({ testsMayUseTesting: false }),
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    files: ['**/*.spec.ts', '**/test/**/*.ts'],
    rules: { '@nx/enforce-module-boundaries': layerRules({ testsMayUseTesting: true }) },
  },
  {
    // No line over 120 characters (prettier's printWidth; it does not split strings or comments).
    // The generated client (libs/client/src/generated) is exempt in libs/client/eslint.config.mjs.
    files: ['**/*.ts', '**/*.tsx', '**/*.js', '**/*.jsx', '**/*.mjs', '**/*.cjs'],
    rules: { 'max-len': ['error', { code: 120 }] },
  },
  {
    // The domain knows nothing of frameworks or persistence.
    files: ['libs/domain/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['@nestjs/*', 'typeorm', 'typeorm/*', 'class-validator', 'class-transformer', 'pg'],
              message: 'libs/domain must stay framework-free.',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['libs/application/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [APPLICATION_PORTS_ONLY] }] },
  },
  {
    files: ['libs/application/src/**/*.ts'],
    ignores: TEST_FILES,
    rules: { 'no-restricted-imports': ['error', { patterns: [APPLICATION_PORTS_ONLY, NO_TEST_DOUBLES] }] },
  },
  {
    files: [
      'libs/infrastructure/src/**/*.ts',
      'libs/testing/src/**/*.ts',
      'libs/embedded-postgres/src/**/*.ts',
      'apps/*/src/**/*.ts',
    ],
    ignores: TEST_FILES,
    rules: { 'no-restricted-imports': ['error', { patterns: [NO_TEST_DOUBLES] }] },
  },
  {
    // The client is what API callers install: no server framework, no persistence, no non-null assertions.
    files: ['libs/client/**/*.ts'],
    rules: {
      '@typescript-eslint/no-non-null-assertion': 'error',
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['@nestjs/*', 'typeorm', 'typeorm/*', 'pg', 'fastify', '**/apps/**'],
              message: 'libs/client must not import server code.',
            },
          ],
        },
      ],
    },
  },
];
