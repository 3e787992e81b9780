export * from './message.repository';
export * from './message-queue';
export * from './retry-backoff';
export * from './message.use-cases';
