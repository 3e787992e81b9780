export * from './webhook.ports';
export * from './webhook-fan-out';
export * from './webhook.use-cases';
export * from './webhook-delivery.use-cases';
export * from './subscriber-cache';
export * from './webhook.errors';
export * from './endpoint-concurrency';
