/*
 * Test support of the application layer, for tests only (the lint refuses it in production code):
 * in-memory fakes of the ports, test-data builders, and the port contract suites that the fakes and
 * the PostgreSQL repositories both pass. libs/application's specs import it relatively; other projects'
 * specs as `@petstore/application/testing`.
 */
export * from './in-memory/in-memory-database';
export * from './in-memory/in-memory-catalogue';
export * from './in-memory/in-memory-order.repository';
export * from './in-memory/in-memory-accounts';
export * from './in-memory/in-memory-messages';
export * from './in-memory/in-memory-petstore';
export * from './builders/builders';
export * from './contracts/category-repository.contract';
export * from './contracts/pet-repository.contract';
export * from './contracts/stock.contract';
export * from './contracts/order-repository.contract';
export * from './contracts/account-repository.contract';
export * from './contracts/api-key-repository.contract';
export * from './contracts/message-repository.contract';
export * from './in-memory/in-memory-events';
export * from './in-memory/in-memory-webhooks';
export * from './contracts/event-outbox.contract';
export * from './contracts/webhook-repository.contract';
export * from './contracts/webhook-outbound-budget.contract';
export * from './in-memory/in-memory-idempotency';
export * from './contracts/idempotency-store.contract';
