export * from './account.repository';
export * from './account.use-cases';
