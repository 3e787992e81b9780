export * from './inventory.repository';
