export * from './message';
export * from './message.errors';
