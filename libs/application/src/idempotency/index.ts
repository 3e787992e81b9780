export * from './idempotency.store';
export * from './idempotency.errors';
export * from './result-sealer';
export * from './run-idempotently';
export * from './purge-expired-keys';
