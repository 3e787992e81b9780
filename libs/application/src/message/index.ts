export * from './message.repository';
export * from './message-queue';
export * from './message.use-cases';
