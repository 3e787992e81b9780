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

/*
 * Slice rules (docs/architecture.md, "Slices and their directions"): lint checks slices, not only layers.
 * Each slice is declared once, with its folder name per layer (libs/application/src/<a>,
 * libs/infrastructure/src/persistence/<p>, apps/api/src/<api>) and the slices it may import (`uses`); an import of
 * any other slice's folder is refused. The directions allowed:
 *   catalogue, messaging, accounts -> events (the EventRecorder port)
 *   ordering -> catalogue (StockReservations), accounts (the customer's row lock), events
 *   webhooks -> every slice (their consumer; nothing but webhooks and the assembly, untagged, imports webhooks)
 *   events -> none (events know no consumer); the api's payload map (the `data` of an event is the resource as the
 *   API shows it) reads the DTOs in apps/api/src/resources, below every slice
 * So catalogue -> ordering is refused: the catalogue asks ordering only through its own port (OpenOrders).
 * Folders that are no slice's (ports, common, resources, …) are not checked here. Slices import one another
 * relatively (the libraries' barrels are not told apart): the patterns match a path segment. A flat config's later
 * `no-restricted-imports` replaces an earlier one for the same file, so each block repeats the layer's own patterns
 * (APPLICATION_PORTS_ONLY, NO_TEST_DOUBLES) before the slice's.
 */
export const SLICES = {
  catalogue: {
    application: ['category', 'pet', 'stock'],
    persistence: ['category', 'pet', 'stock'],
    api: ['catalogue'],
    uses: ['events'],
  },
  ordering: {
    application: ['order'],
    persistence: ['order'],
    api: ['ordering'],
    uses: ['catalogue', 'accounts', 'events'],
  },
  accounts: { application: ['account'], persistence: ['account'], api: ['accounts'], uses: ['events'] },
  messaging: { application: ['message'], persistence: ['message'], api: ['messages'], uses: ['events'] },
  events: { application: ['events'], persistence: ['events'], api: ['events'], uses: [] },
  webhooks: {
    application: ['webhook'],
    persistence: ['webhook'],
    api: ['webhooks'],
    uses: ['catalogue', 'ordering', 'accounts', 'messaging', 'events'],
  },
};
/** Why a slice may not import another: by `from->to`, by `*->to` for any slice importing `to`, or by `from->*`. */
const REFUSAL_REASONS = {
  '*->webhooks':
    'Only webhooks and the assembly import webhooks: a slice records its facts through the events port ' +
    '(EventRecorder), and webhooks subscribe to the events.',
  'catalogue->ordering':
    'The catalogue knows no order: ordering uses the catalogue (StockReservations), and the catalogue asks ' +
    'ordering only through its own port (OpenOrders).',
  'events->*':
    'events depend on no slice: the slices record facts through EventRecorder, consumers subscribe; the payload ' +
    'map reads the resources as the API shows them (apps/api/src/resources).',
};
const reasonFor = (from, to) =>
  REFUSAL_REASONS[`${from}->${to}`] ?? REFUSAL_REASONS[`*->${to}`] ?? REFUSAL_REASONS[`${from}->*`] ?? '';
const foldersOf = (slice) => [...new Set([...slice.application, ...slice.persistence, ...slice.api])];
const refusal = (from, to) => ({
  regex: `^(\\.{1,2}/)+(.*/)?(${foldersOf(SLICES[to]).join('|')})(/|$)`,
  message:
    `${from} ${SLICES[from].uses.length ? `may import only ${SLICES[from].uses.join(', ')}` : 'may import no slice'}` +
    `, not ${to} (eslint.config.mjs, SLICES). ${reasonFor(from, to)}`.trim(),
});
const refusedBy = (from) =>
  Object.keys(SLICES)
    .filter((to) => to !== from && !SLICES[from].uses.includes(to))
    .map((to) => refusal(from, to));
const restrict = (...patterns) => ({ 'no-restricted-imports': ['error', { patterns }] });
const sliceRules = Object.entries(SLICES)
  .map(([name, slice]) => [slice, refusedBy(name)])
  .filter(([, refused]) => refused.length)
  .flatMap(([slice, refused]) => {
    const application = slice.application.map((folder) => `libs/application/src/${folder}/**/*.ts`);
    const outer = [
      ...slice.persistence.map((folder) => `libs/infrastructure/src/persistence/${folder}/**/*.ts`),
      ...slice.api.map((folder) => `apps/api/src/${folder}/**/*.ts`),
    ];
    return [
      {
        files: application,
        ignores: TEST_FILES,
        rules: restrict(APPLICATION_PORTS_ONLY, NO_TEST_DOUBLES, ...refused),
      },
      {
        files: application.map((glob) => glob.replace(/\.ts$/, '.spec.ts')),
        rules: restrict(APPLICATION_PORTS_ONLY, ...refused),
      },
      { files: outer, ignores: TEST_FILES, rules: restrict(NO_TEST_DOUBLES, ...refused) },
      { files: outer.map((glob) => glob.replace(/\.ts$/, '.spec.ts')), rules: restrict(...refused) },
    ];
  });

/**
 * Folder direction inside apps/api/src (docs/architecture.md, "Inside apps/api"). Every folder has a rank, and a
 * folder's production code imports only folders of a lower rank, so imports between folders can make no cycle:
 *   config, release, lifecycle  <-  common  <-  database, jobs, metrics, idempotency  <-  openapi
 *     <-  the slices (which may also import one another)  <-  assembly  <-  main.ts, create-app.ts
 * and inside common/ the same, from http-kit (imports nothing of the app) up. A top-level folder not in the table is
 * a slice (the resource generator adds such folders); a new folder of common/ needs a rank here
 * (tools/check-boundaries.mjs fails on one without). Specs are exempt, as for the layers: nothing imports a
 * spec, so it closes no cycle (apps/api/src/assembly/folders.spec.ts walks the production imports for cycles).
 * These rules own `@typescript-eslint/no-restricted-imports` for apps/api/src; other import rules for those files
 * use the core `no-restricted-imports`, so that neither block replaces the other.
 */
export const APP_FOLDER_RANKS = {
  config: 0,
  release: 0,
  lifecycle: 0,
  common: 1,
  database: 2,
  jobs: 2,
  metrics: 2,
  idempotency: 2,
  openapi: 3,
  // The request and response DTOs of the resources whose changes are events: the slices' controllers and the events'
  // payload map both use them, so they sit below both (in a slice, the events would import it: a cycle).
  resources: 3,
  accounts: 4,
  catalogue: 4,
  ordering: 4,
  messages: 4,
  webhooks: 4,
  health: 4,
  seed: 4,
  assembly: 5,
};
const SLICE_RANK = 4;
export const COMMON_FOLDER_RANKS = {
  'http-kit': 0,
  errors: 1,
  auth: 2,
  http: 2,
  logging: 2,
  tracing: 2,
  validation: 2,
  admission: 3,
  conditional: 3,
  deprecation: 3,
  drain: 3,
  pagination: 3,
  'rate-limit': 4,
};
// The folder names of both tables differ, so a relative import names its folder whatever its depth.
const below = (ranks, rank) => Object.keys(ranks).filter((name) => ranks[name] < rank);
const notBelow = (ranks, rank, self) => Object.keys(ranks).filter((name) => ranks[name] >= rank && name !== self);
const folderRule = (files, forbidden, allowed) => ({
  files,
  ignores: TEST_FILES,
  rules: {
    '@typescript-eslint/no-restricted-imports': [
      'error',
      {
        patterns: [
          {
            regex: `^(\\.\\./)+(common/)?(${forbidden.join('|')})(/|$)`,
            message: `Imports run down the folders of apps/api/src (docs/architecture.md): this folder may import ${
              allowed.join(', ') || 'no other folder of the app'
            }.`,
          },
        ],
      },
    ],
  },
});
const folderDirection = [
  // Any folder of apps/api/src first, as a slice; the blocks after it, more specific, replace this for theirs.
  folderRule(
    ['apps/api/src/*/**/*.ts'],
    notBelow(APP_FOLDER_RANKS, SLICE_RANK).filter((other) => APP_FOLDER_RANKS[other] !== SLICE_RANK),
    below(APP_FOLDER_RANKS, SLICE_RANK),
  ),
  ...Object.entries(APP_FOLDER_RANKS)
    .filter(([name]) => name !== 'common')
    .map(([name, rank]) =>
      folderRule(
        [`apps/api/src/${name}/**/*.ts`],
        notBelow(APP_FOLDER_RANKS, rank, name).filter(
          (other) => rank !== SLICE_RANK || APP_FOLDER_RANKS[other] !== rank,
        ),
        below(APP_FOLDER_RANKS, rank),
      ),
    ),
  ...Object.entries(COMMON_FOLDER_RANKS).map(([name, rank]) =>
    folderRule(
      [`apps/api/src/common/${name}/**/*.ts`],
      [...notBelow(APP_FOLDER_RANKS, APP_FOLDER_RANKS.common, 'common'), ...notBelow(COMMON_FOLDER_RANKS, rank, name)],
      [
        ...below(APP_FOLDER_RANKS, APP_FOLDER_RANKS.common),
        ...below(COMMON_FOLDER_RANKS, rank).map((n) => `common/${n}`),
      ],
    ),
  ),
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
  // Folder direction inside apps/api/src (above).
  ...folderDirection,
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
  // Slice rules (see SLICES above): after the layers' blocks, which they repeat and extend.
  ...sliceRules,
];
