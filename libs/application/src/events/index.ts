export * from './event.ports';
export * from './event-recorder';
export * from './event-bodies';
export * from './event-log.use-cases';
export * from './event-relay';
