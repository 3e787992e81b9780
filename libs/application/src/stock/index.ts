export * from './stock-levels';
export * from './stock.use-cases';
