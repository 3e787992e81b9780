export * from './category';
export * from './category.errors';
