export * from './shared/domain-error';
export * from './shared/limits';
export * from './shared/text';
export * from './category';
export * from './account';
