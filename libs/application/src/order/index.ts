export * from './order.repository';
export * from './order-hold.settings';
export * from './order-command';
export * from './order.use-cases';
export * from './expire-held-orders';
