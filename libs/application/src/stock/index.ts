export * from './stock-command';
export * from './stock-levels';
export * from './stock.use-cases';
