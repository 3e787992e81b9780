export * from './inventory-item';
export * from './inventory.errors';
export * from './stock-rules';
