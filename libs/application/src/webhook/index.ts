export * from './webhook.ports';
export * from './webhook-events';
export * from './webhook.use-cases';
export * from './subscriber-cache';
export * from './webhook.errors';
export * from './event-log.use-cases';
