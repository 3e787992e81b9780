import { Initial1763769600000 } from './1763769600000-initial';
import { Messages1763769900000 } from './1763769900000-messages';
import { IdempotencyKeys1763770000000 } from './1763770000000-idempotency-keys';
import { PetsAndInventory1763856000000 } from './1763856000000-pets-and-inventory';
import { Orders1763856100000 } from './1763856100000-orders';
import { MessageDeliveryJobs1763942460000 } from './1763942460000-message-delivery-jobs';
import { OpenOrderIndexes1764000100000 } from './1764000100000-open-order-indexes';
import { BootstrapApiKeys1764000200000 } from './1764000200000-bootstrap-api-keys';
import { IdempotencyResults1764000300000 } from './1764000300000-idempotency-results';
import { Webhooks1764000400000 } from './1764000400000-webhooks';
import { StockTable1764000500000 } from './1764000500000-stock-table';
import { OrdersAsRecords1796000100000 } from './1796000100000-orders-as-records';
import { CategoryNameKey1796000200000 } from './1796000200000-category-name-key';
import { EventLog1796000300000 } from './1796000300000-event-log';
import { ApiKeyScopes1796000400000 } from './1796000400000-api-key-scopes';
import { WebhookSecretRotation1796000500000 } from './1796000500000-webhook-secret-rotation';
import { IdempotencyKeyHashes1796000600000 } from './1796000600000-idempotency-key-hashes';
import { OrderIdBlocks1796000700000 } from './1796000700000-order-id-blocks';
import { SchemaMigrationReleases1796000800000 } from './1796000800000-schema-migration-releases';
import { WebhookQueueIndexes1796000810000 } from './1796000810000-webhook-queue-indexes';
import { HeldWriteRowCheck1796000850000 } from './1796000850000-held-write-row-check';
import { EventCommitOrder1796000900000 } from './1796000900000-event-commit-order';
import { EventCommitOrderIndexes1796000910000 } from './1796000910000-event-commit-order-indexes';
import { EventTypeIndex1796000920000 } from './1796000920000-event-type-index';
import { EventCommits1796000930000 } from './1796000930000-event-commits';
import { EventCommitsBackfill1796000940000 } from './1796000940000-event-commits-backfill';
import { ServiceSecretsTable1796000950000 } from './1796000950000-service-secrets';
import { ResourceVersions1796000960000 } from './1796000960000-resource-versions';
import { WebhookRecoveryIndex1796000970000 } from './1796000970000-webhook-recovery-index';
import { WebhookOutboundBudgets1796000990000 } from './1796000990000-webhook-outbound-budgets';
import { CatalogueChangeSignals1796001000000 } from './1796001000000-catalogue-change-signals';

/** Every migration, oldest first (TypeORM runs them by the timestamp in their names). A new one is appended here. */
export const MIGRATIONS = [
  Initial1763769600000,
  Messages1763769900000,
  IdempotencyKeys1763770000000,
  PetsAndInventory1763856000000,
  Orders1763856100000,
  MessageDeliveryJobs1763942460000,
  OpenOrderIndexes1764000100000,
  BootstrapApiKeys1764000200000,
  IdempotencyResults1764000300000,
  Webhooks1764000400000,
  StockTable1764000500000,
  OrdersAsRecords1796000100000,
  CategoryNameKey1796000200000,
  EventLog1796000300000,
  ApiKeyScopes1796000400000,
  WebhookSecretRotation1796000500000,
  IdempotencyKeyHashes1796000600000,
  OrderIdBlocks1796000700000,
  SchemaMigrationReleases1796000800000,
  WebhookQueueIndexes1796000810000,
  HeldWriteRowCheck1796000850000,
  EventCommitOrder1796000900000,
  EventCommitOrderIndexes1796000910000,
  EventTypeIndex1796000920000,
  EventCommits1796000930000,
  EventCommitsBackfill1796000940000,
  ServiceSecretsTable1796000950000,
  ResourceVersions1796000960000,
  WebhookRecoveryIndex1796000970000,
  WebhookOutboundBudgets1796000990000,
  CatalogueChangeSignals1796001000000,
];
