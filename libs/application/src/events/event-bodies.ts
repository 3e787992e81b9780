import { Injectable } from '@nestjs/common';
import { FeedPosition } from './event.ports';

/**
 * A feed position as clients see it (`position`, `startingAfter`, `endingBefore`): an opaque token that reveals
 * nothing of the events a reader cannot see (EventPositions in the API: encrypted, the same on every instance).
 */
export abstract class FeedPositionTokens {
  abstract token(position: FeedPosition): string;
}

/**
 * The body an event is sent with, to webhook endpoints (every attempt) and to the event stream alike: one builder, so
 * that both carry the same text for the same event. It is the body stored with the event, `{"type", "timestamp",
 * "data"}` (`data` the resource as the API showed it, with its `version`), with the event's `position` in the
 * commit-order feed as its last member: the token `GET /events?order=commit` lists the event with. A ping, which is
 * not in the feed, is sent as stored.
 */
@Injectable()
export class EventBodies {
  constructor(private readonly tokens: FeedPositionTokens) {}

  /** `position`: the event's settled feed position (null for a ping). */
  sent(event: { body: string; position: FeedPosition | null }): string {
    if (event.position === null) return event.body;
    const { body } = event;
    // The stored body is JSON.stringify's text of an object: the member is added before its closing brace, and the
    // rest is sent byte for byte as stored (no parse and serialise again).
    if (!body.startsWith('{') || !body.endsWith('}')) throw new Error('A stored event body is not a JSON object.');
    const member = `"position":${JSON.stringify(this.tokens.token(event.position))}`;
    return `${body.slice(0, -1)}${body === '{}' ? '' : ','}${member}}`;
  }
}
