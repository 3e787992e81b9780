export * from './database/data-source';
