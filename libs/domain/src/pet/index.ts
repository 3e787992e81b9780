export * from './pet-status';
export * from './pet';
export * from './pet.errors';
