export * from './stock-command';
export * from './stock-levels';
export * from './stock.use-cases';
export * from './stock.repository';
