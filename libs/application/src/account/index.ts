export * from './account.repository';
export * from './key-revocations';
export * from './verified-key-cache';
export * from './account.use-cases';
