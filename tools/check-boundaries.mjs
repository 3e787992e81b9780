// Proves the layer rules bite: lints imports against the direction of dependencies
// (domain <- application <- infrastructure <- api) and expects each to be refused; the slice rules
// (eslint.config.mjs, SLICES: webhooks -> events <- catalogue, ordering, messaging; ordering -> catalogue, never the
// reverse; nothing -> webhooks but the assembly); and the folders inside apps/api/src and its common/
// (eslint.config.mjs, "Folder direction"), and every folder of common/ has a rank.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { ESLint } from 'eslint';
import { APP_FOLDER_RANKS, COMMON_FOLDER_RANKS } from '../eslint.config.mjs';

/** A file at `filePath` that imports `name` from `module`. */
const probe = (filePath, name, module) => [
  filePath,
  `import { ${name} } from '${module}';\nexport const x = ${name};\n`,
];
const EMBEDDED = ['startEmbeddedPostgres', '@petstore/embedded-postgres'];
const MIGRATE = ['migrateDatabase', '@petstore/infrastructure'];
const FAKES = ['InMemoryDatabase', '@petstore/application/testing'];

const forbidden = [
  [
    'libs/domain/src/probe.ts',
    "import { migrateDatabase } from '@petstore/infrastructure';\nexport const x = migrateDatabase;\n",
  ],
  ['libs/domain/src/probe.ts', "import { UnitOfWork } from '@petstore/application';\nexport const x = UnitOfWork;\n"],
  ['libs/domain/src/probe.ts', "import { Injectable } from '@nestjs/common';\nexport const x = Injectable;\n"],
  [
    'libs/application/src/probe.ts',
    "import { migrateDatabase } from '@petstore/infrastructure';\nexport const x = migrateDatabase;\n",
  ],
  ['libs/application/src/probe.ts', "import { DataSource } from 'typeorm';\nexport const x = DataSource;\n"],
  [
    'libs/infrastructure/src/probe.ts',
    "import { resetDatabase } from '@petstore/testing';\nexport const x = resetDatabase;\n",
  ],
  ['apps/api/src/probe.ts', "import { resetDatabase } from '@petstore/testing';\nexport const x = resetDatabase;\n"],
  // The embedded PostgreSQL is no part of the production persistence code, and depends on no layer.
  probe('libs/infrastructure/src/probe.ts', ...EMBEDDED),
  probe('libs/application/src/probe.ts', ...EMBEDDED),
  probe('libs/embedded-postgres/src/probe.ts', ...MIGRATE),
  // infrastructure's specs use the testing lib: an import back would be a cycle.
  probe('libs/testing/src/probe.ts', ...MIGRATE),
  // The typed client is what callers install: no server code, and the server does not use it.
  probe('libs/client/src/probe.ts', 'Category', '@petstore/domain'),
  probe('libs/client/src/probe.ts', 'createApp', '../../../apps/api/src/create-app'),
  probe('apps/api/src/probe.ts', 'createPetstoreClient', '@petstore/client'),
  // The fakes, builders and contract suites are for tests only.
  probe('libs/application/src/probe.ts', 'InMemoryDatabase', '../testing'),
  probe('libs/application/src/category/probe.ts', 'InMemoryDatabase', '../../testing/in-memory'),
  probe('libs/infrastructure/src/probe.ts', ...FAKES),
  probe('apps/api/src/probe.ts', ...FAKES),
  // Slices (eslint.config.mjs, SLICES): nothing but webhooks and the assembly imports webhooks; events import no slice.
  probe('libs/application/src/stock/probe.ts', 'WebhookFanOut', '../webhook/webhook-fan-out'),
  probe('libs/application/src/message/probe.ts', 'WebhookFanOut', '../webhook'),
  probe('libs/application/src/stock/probe.spec.ts', 'WebhookFanOut', '../webhook/webhook-fan-out'),
  probe('libs/application/src/events/probe.ts', 'SubscriberCache', '../webhook/subscriber-cache'),
  probe('libs/application/src/events/probe.ts', 'StockCommand', '../stock/stock-command'),
  probe('libs/infrastructure/src/persistence/order/probe.ts', 'WebhookWorker', '../../webhook/webhook-worker'),
  probe(
    'libs/infrastructure/src/persistence/events/probe.ts',
    'PgWebhookEndpointRepository',
    '../webhook/pg-webhook-endpoint.repository',
  ),
  probe('apps/api/src/catalogue/probe.ts', 'WebhooksModule', '../webhooks/webhooks.module'),
  probe('apps/api/src/ordering/probe.ts', 'WebhooksModule', '../webhooks/webhooks.module'),
  probe('apps/api/src/messages/probe.ts', 'WebhooksModule', '../webhooks/webhooks.module'),
  probe('apps/api/src/accounts/probe.ts', 'WebhooksModule', '../webhooks/webhooks.module'),
  probe('apps/api/src/events/probe.ts', 'WebhooksModule', '../webhooks/webhooks.module'),
  probe('apps/api/src/events/probe.ts', 'CatalogueModule', '../catalogue/catalogue.module'),
  probe('apps/api/src/events/probe.ts', 'PetListQueryDto', '../catalogue/pet-list.query.dto'),
  // The catalogue knows no order: ordering uses the catalogue (StockReservations), the catalogue asks through its own
  // port (OpenOrders), in every layer and in its specs too.
  probe('libs/application/src/stock/probe.ts', 'OrderRepository', '../order/order.repository'),
  probe('libs/application/src/pet/probe.ts', 'PlaceOrder', '../order'),
  probe('libs/application/src/category/probe.spec.ts', 'OrderCommand', '../order/order-command'),
  probe('libs/infrastructure/src/persistence/pet/probe.ts', 'PgOrderRepository', '../order/pg-order.repository'),
  probe('apps/api/src/catalogue/probe.ts', 'OrderingModule', '../ordering/ordering.module'),
  // A slice imports only the slices it declares (SLICES' `uses`): the catalogue not the accounts, accounts no order.
  probe('libs/application/src/stock/probe.ts', 'AccountRepository', '../account/account.repository'),
  probe('libs/application/src/account/probe.ts', 'OrderRepository', '../order/order.repository'),
  // resources (the DTOs) sit below the slices: they import none.
  probe('apps/api/src/resources/probe.ts', 'CatalogueModule', '../catalogue/catalogue.module'),
  // Folders of apps/api/src: common/ folders import only lower ones (http-kit nothing), and common/ no folder above it.
  probe('apps/api/src/common/errors/probe.ts', 'requestId', '../http/request-id'),
  probe('apps/api/src/common/http-kit/probe.ts', 'ApiError', '../errors/api-error'),
  probe('apps/api/src/common/auth/probe.ts', 'buildOpenApiDocument', '../../openapi/openapi'),
  probe('apps/api/src/common/admission/probe.ts', 'Metrics', '../../metrics/metrics'),
  // Top-level folders import only lower ones: the description knows no slice, a slice not the assembly.
  probe('apps/api/src/openapi/probe.ts', 'AccountsModule', '../accounts/accounts.module'),
  probe('apps/api/src/metrics/probe.ts', 'registerRequestPipeline', '../assembly/pipeline'),
  probe('apps/api/src/catalogue/probe.ts', 'ProcessModule', '../assembly/assembly'),
  // A folder the table does not name (a generated resource) is a slice.
  probe('apps/api/src/new-things/probe.ts', 'ProcessModule', '../assembly/assembly'),
];
const allowed = [
  [
    'apps/api/test/probe.spec.ts',
    "import { resetDatabase } from '@petstore/testing';\nexport const x = resetDatabase;\n",
  ],
  ['libs/infrastructure/src/probe.ts', "import { Category } from '@petstore/domain';\nexport const x = Category;\n"],
  ['libs/application/src/probe.ts', "import { Category } from '@petstore/domain';\nexport const x = Category;\n"],
  probe('apps/api/src/probe.ts', ...EMBEDDED),
  probe('libs/testing/src/probe.ts', ...EMBEDDED),
  probe('libs/infrastructure/src/probe.spec.ts', ...EMBEDDED),
  probe('apps/api/test/probe.spec.ts', 'createPetstoreClient', '@petstore/client'),
  probe('libs/infrastructure/src/probe.spec.ts', ...FAKES),
  probe('apps/api/test/probe.spec.ts', ...FAKES),
  probe('libs/application/src/category/probe.spec.ts', 'InMemoryDatabase', '../../testing'),
  // Slices: the events port from catalogue, ordering and messaging; events from webhooks; webhooks from the assembly.
  probe('libs/application/src/stock/probe.ts', 'EventRecorder', '../events/event.ports'),
  probe('libs/application/src/message/probe.ts', 'EventRecorder', '../events'),
  probe('libs/application/src/webhook/probe.ts', 'OutboxEventRecorder', '../events/event-recorder'),
  probe('apps/api/src/catalogue/probe.ts', 'EventsModule', '../events/events.module'),
  probe('apps/api/src/ordering/probe.ts', 'EventsModule', '../events/events.module'),
  probe('apps/api/src/webhooks/probe.ts', 'EventsModule', '../events/events.module'),
  probe('apps/api/src/assembly/probe.ts', 'WebhooksModule', '../webhooks/webhooks.module'),
  probe('apps/api/src/events/probe.ts', 'PetDto', '../resources/pet.dto'),
  probe('apps/api/src/catalogue/probe.ts', 'PetDto', '../resources/pet.dto'),
  probe('apps/api/src/common/http/probe.ts', 'ApiError', '../errors/api-error'),
  probe('apps/api/src/common/rate-limit/probe.ts', 'routeOf', '../http-kit/route-label'),
  probe('apps/api/src/openapi/probe.ts', 'describeIdempotency', '../idempotency/idempotency.openapi'),
  probe('apps/api/src/ordering/probe.ts', 'CatalogueModule', '../catalogue/catalogue.module'),
  // Ordering uses the catalogue and the accounts, in every layer.
  probe('libs/application/src/order/probe.ts', 'StockReservations', '../stock/stock-reservations'),
  probe('libs/application/src/order/probe.ts', 'AccountRepository', '../account/account.repository'),
  probe('libs/infrastructure/src/persistence/order/probe.ts', 'PgPetRepository', '../pet/pg-pet.repository'),
  probe('apps/api/src/ordering/probe.ts', 'AccountRepositoryModule', '../accounts/accounts.module'),
  probe('apps/api/src/assembly/probe.ts', 'MetricsModule', '../metrics/metrics.module'),
  // A spec is imported by nothing, so closes no cycle: it may use what it tests with (the real registry here).
  probe('apps/api/src/common/admission/probe.spec.ts', 'Metrics', '../../metrics/metrics'),
];

const eslint = new ESLint();
let failures = 0;
for (const [filePath, code] of forbidden) {
  const [result] = await eslint.lintText(code, { filePath });
  const refused = result.messages.some(
    (m) => m.severity === 2 && /enforce-module-boundaries|no-restricted-imports/.test(m.ruleId ?? ''),
  );
  console.log(`${refused ? 'refused (good)' : 'ALLOWED (bad)  '} ${filePath}: ${code.split('\n')[0]}`);
  if (!refused) failures++;
}
for (const [filePath, code] of allowed) {
  const [result] = await eslint.lintText(code, { filePath });
  const errors = result.messages.filter((m) => m.severity === 2);
  console.log(`${errors.length ? 'REFUSED (bad) ' : 'allowed (good)'} ${filePath}: ${code.split('\n')[0]}`);
  if (errors.length) failures++;
}
/** The folders of `dir` that hold TypeScript, at any depth. */
const tsFolders = (dir) =>
  readdirSync(dir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .filter((entry) => readdirSync(join(dir, entry.name), { recursive: true }).some((f) => String(f).endsWith('.ts')))
    .map((entry) => entry.name);
// A top-level folder without a rank is a slice; a folder of common/ has no such default.
for (const folder of tsFolders('apps/api/src/common').filter((name) => !(name in COMMON_FOLDER_RANKS))) {
  console.log(`NO RANK (bad)  apps/api/src/common/${folder}: give it one in eslint.config.mjs ("Folder direction")`);
  failures++;
}
if (!('common' in APP_FOLDER_RANKS)) failures++;
process.exit(failures ? 1 : 0);
