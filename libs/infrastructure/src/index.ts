export * from './database/data-source';
export * from './database/transaction-host';
export * from './persistence/category/typeorm-category.repository';
export * from './persistence/account/typeorm-account.repository';
export * from './security/crypto-api-key-secrets';
export * from './system/system-clock';
export * from './database/embedded-postgres';
export * from './persistence/idempotency/typeorm-idempotency.store';
