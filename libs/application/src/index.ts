export * from './ports';
export * from './shared/page';
export * from './category';
export * from './account';
export * from './pet';
export * from './inventory';
export * from './idempotency';
export * from './message';
