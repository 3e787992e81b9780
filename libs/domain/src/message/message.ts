import { InvalidValueError } from '../common/domain-error';
import { LIMITS } from '../common/limits';
import { FIRST_VERSION } from '../common/version';

/** queued → delivered, or queued → failed once every delivery attempt allowed has failed. */
export const MESSAGE_STATUSES = ['queued', 'delivered', 'failed'] as const;
export type MessageStatus = (typeof MESSAGE_STATUSES)[number];

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Whether `value` has the form of a message id: a UUID, in any letter case (PostgreSQL's `uuid` accepts it). */
export function isMessageId(value: unknown): value is string {
  return typeof value === 'string' && UUID.test(value);
}

export interface MessageProps {
  /** A UUID, chosen by the caller (the domain generates nothing). */
  id: string;
  text: string;
  status: MessageStatus;
  createdAt: Date;
  deliveredAt: Date | null;
  ownerId: number;
  /** FIRST_VERSION when queued; one more for each stored change of its status. */
  version: number;
}

/** A message posted to `POST /messages`: queued at once, delivered later by a worker. */
export class Message {
  private constructor(private readonly props: MessageProps) {}

  /**
   * A new, queued message. The text is kept as sent: it is not trimmed, and its length
   * (1 … LIMITS.messageText.max, in UTF-16 code units like every length here) is that of the
   * raw string, so a message of spaces is valid.
   */
  static queue(input: { id: string; text: string; ownerId: number; now: Date }): Message {
    return new Message({
      id: Message.checkId(input.id),
      text: Message.checkText(input.text),
      status: 'queued',
      createdAt: input.now,
      deliveredAt: null,
      ownerId: input.ownerId,
      version: FIRST_VERSION,
    });
  }

  static restore(props: MessageProps): Message {
    return new Message({ ...props });
  }

  get id(): string {
    return this.props.id;
  }
  get text(): string {
    return this.props.text;
  }
  get status(): MessageStatus {
    return this.props.status;
  }
  get createdAt(): Date {
    return this.props.createdAt;
  }
  get deliveredAt(): Date | null {
    return this.props.deliveredAt;
  }
  get ownerId(): number {
    return this.props.ownerId;
  }
  get version(): number {
    return this.props.version;
  }
  get isDelivered(): boolean {
    return this.props.status === 'delivered';
  }

  get isSettled(): boolean {
    return this.props.status !== 'queued';
  }

  /**
   * queued → delivered. Idempotent: a second delivery keeps the first `deliveredAt`. A delivery that
   * succeeds after the message was given up (a late attempt) still counts: the text did arrive.
   */
  deliver(at: Date): void {
    if (this.isDelivered) return;
    this.props.status = 'delivered';
    this.props.deliveredAt = at;
  }

  /** A change of the message is stored: its version goes one up, as the database counts it (FIRST_VERSION). */
  advanceVersion(): void {
    this.props.version += 1;
  }

  /** queued → failed: no attempt is left. A delivered message stays delivered. */
  giveUp(): void {
    if (this.props.status === 'queued') this.props.status = 'failed';
  }

  toSnapshot(): MessageProps {
    return { ...this.props };
  }

  /** Kept in lower case, the form PostgreSQL's `uuid` type returns. */
  private static checkId(id: string): string {
    if (!isMessageId(id)) {
      throw new InvalidValueError('id', 'id must be a UUID.');
    }
    return id.toLowerCase();
  }

  private static checkText(text: string): string {
    const { min, max } = LIMITS.messageText;
    if (typeof text !== 'string' || text.length < min || text.length > max) {
      throw new InvalidValueError('message', `message must be ${min} to ${max} characters long.`);
    }
    return text;
  }
}
