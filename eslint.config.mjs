import nx from '@nx/eslint-plugin';

/**
 * Layer rules (docs/architecture.md, Layers). Dependencies point inwards only:
 *   app -> infrastructure -> application -> domain
 * The testing lib (test database) may use every layer; production code may not import it, tests may.
 * The embedded PostgreSQL runner (libs/embedded-postgres, a development and test database) depends on no
 * other lib; the app (its database when DATABASE_URL is unset), the testing lib and tests may import it,
 * the layers' production code may not.
 */
const ALL_LAYERS = ['type:domain', 'type:application', 'type:infrastructure'];
const EMBEDDED = 'type:embedded-postgres';
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
        onlyDependOnLibsWithTags: testsMayUseTesting ? [...ALL_LAYERS, 'type:testing', EMBEDDED] : [...ALL_LAYERS, EMBEDDED],
      },
      { sourceTag: 'type:testing', onlyDependOnLibsWithTags: [...ALL_LAYERS, 'type:testing', EMBEDDED] },
      { sourceTag: EMBEDDED, onlyDependOnLibsWithTags: [EMBEDDED] },
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
    // The domain knows nothing of frameworks or persistence.
    files: ['libs/domain/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: ['@nestjs/*', 'typeorm', 'typeorm/*', 'class-validator', 'class-transformer', 'pg'], message: 'libs/domain must stay framework-free.' },
          ],
        },
      ],
    },
  },
  {
    files: ['libs/application/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: ['typeorm', 'typeorm/*', 'pg', '@nestjs/platform-*', 'class-validator'], message: 'libs/application talks to persistence only through its ports.' },
          ],
        },
      ],
    },
  },
];
