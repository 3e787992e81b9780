export * from './category.repository';
export * from './category.use-cases';
