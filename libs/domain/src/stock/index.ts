export * from './stock';
export * from './stock.errors';
export * from './stock-rules';
