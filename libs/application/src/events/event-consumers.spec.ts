import { EVENT_TYPES } from '@petstore/domain';
import { EventConsumers, OnEventRecorded, RecordedEvent } from './event-recorder';

const event = (id: string): RecordedEvent => ({
  id,
  type: EVENT_TYPES[0],
  subjectOwnerId: null,
  endpointId: null,
  body: '{}',
  createdAt: new Date(0),
});

class Kept {
  readonly seen: string[] = [];

  @OnEventRecorded()
  async recorded(recorded: RecordedEvent): Promise<void> {
    this.seen.push(`${this.constructor.name}:${recorded.id}`);
  }

  /** Not decorated: never handed an event. */
  async other(recorded: RecordedEvent): Promise<void> {
    this.seen.push(`other:${recorded.id}`);
  }
}

/** A subclass keeps its parent's handler and may add its own. */
class KeptTwice extends Kept {
  @OnEventRecorded()
  async again(recorded: RecordedEvent): Promise<void> {
    this.seen.push(`again:${recorded.id}`);
  }
}

describe('EventConsumers: consumers registered by their @OnEventRecorded() methods', () => {
  it('hands each recorded event to the decorated methods of every instance registered, in order', async () => {
    const consumers = new EventConsumers();
    const first = new Kept();
    const second = new KeptTwice();
    expect(consumers.register(first)).toBe(1);
    expect(consumers.register(second)).toBe(2);
    await consumers.recorded(event('a'));
    expect(first.seen).toEqual(['Kept:a']);
    expect(second.seen.sort()).toEqual(['KeptTwice:a', 'again:a']);
  });

  it('registers an instance once however often it is offered, and ignores one without a handler', async () => {
    const consumers = new EventConsumers();
    const kept = new Kept();
    consumers.register(kept);
    expect(consumers.register(kept)).toBe(0);
    expect(consumers.register({ recorded: async () => undefined })).toBe(0);
    expect(consumers.register(new (class Plain {})())).toBe(0);
    await consumers.recorded(event('b'));
    expect(kept.seen).toEqual(['Kept:b']);
  });

  it('records with no consumer at all', async () => {
    await expect(new EventConsumers().recorded(event('c'))).resolves.toBeUndefined();
  });
});
