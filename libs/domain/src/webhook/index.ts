export * from './webhook';
export * from './webhook.errors';
