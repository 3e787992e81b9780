export * from './pet.repository';
export * from './stock.repository';
export * from './open-orders';
export * from './stock-command';
export * from './stock-reservations';
export * from './stock-levels';
export * from './stock.use-cases';
