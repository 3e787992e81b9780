export * from './event-catalogue';
