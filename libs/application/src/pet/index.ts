export * from './pet.repository';
export * from './pet.use-cases';
