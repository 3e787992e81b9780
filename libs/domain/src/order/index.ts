export * from './order';
export * from './order.errors';
export * from './hold-limit';
