export * from './unit-of-work';
export * from './clock';
export * from './api-key-secrets';
export * from './persistence.errors';
export * from './service-secrets';
