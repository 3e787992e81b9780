export * from './pet.use-cases';
