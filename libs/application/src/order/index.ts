export * from './order.repository';
export * from './order.use-cases';
