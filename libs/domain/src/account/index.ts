export * from './account';
export * from './api-key';
export * from './account.errors';
