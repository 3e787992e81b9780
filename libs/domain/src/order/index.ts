export * from './order';
export * from './order.errors';
