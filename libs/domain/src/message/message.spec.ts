import { DomainError, InvalidValueError } from '../common/domain-error';
import { LIMITS } from '../common/limits';
import { Message, MESSAGE_STATUSES, MessageProps } from './message';
import { MessageNotFoundError } from './message.errors';
import { caught } from '../../test-support/caught';

const id = '3f2b8c1e-9d4a-4b7e-8c2d-1a2b3c4d5e6f';
const now = new Date('2030-06-15T12:00:00.000Z');
const queue = (overrides: Partial<Parameters<typeof Message.queue>[0]> = {}) =>
  Message.queue({ id, text: 'hello', ownerId: 11, now, ...overrides });

describe('Message.queue', () => {
  it('queues the message with the given id', () => {
    expect(queue().toSnapshot()).toEqual({
      id,
      text: 'hello',
      status: 'queued',
      createdAt: now,
      deliveredAt: null,
      ownerId: 11,
      version: 1,
    });
    expect(queue().isDelivered).toBe(false);
  });

  it('keeps an upper-case UUID in lower case', () => {
    expect(queue({ id: id.toUpperCase() }).id).toBe(id);
  });

  it.each(['', 'not-a-uuid', `${id}0`, id.replace(/-/g, ''), `{${id}}`])('refuses id %p', (bad) => {
    const error = caught(() => queue({ id: bad }));
    expect(error).toBeInstanceOf(InvalidValueError);
    expect(error).toMatchObject({ field: 'id', kind: 'invalid' });
  });

  it.each([
    ['one character', 'x'],
    ['only spaces (length counts the raw string)', '   '],
    ['surrounding spaces, kept as sent', '  hi  '],
    [`${LIMITS.messageText.max} characters`, 'm'.repeat(LIMITS.messageText.max)],
  ])('accepts a text of %s, untrimmed', (_, text) => {
    expect(queue({ text }).text).toBe(text);
  });

  it.each([
    ['empty', ''],
    ['too long', 'm'.repeat(LIMITS.messageText.max + 1)],
    ['too long only because of its spaces', ` ${'m'.repeat(LIMITS.messageText.max)}`],
  ])('refuses a text that is %s', (_, text) => {
    const error = caught(() => queue({ text }));
    expect(error).toBeInstanceOf(InvalidValueError);
    expect(error).toMatchObject({ field: 'message', kind: 'invalid' });
  });
});

describe('Message.deliver', () => {
  const first = new Date('2030-06-15T12:00:05.000Z');

  it('queued → delivered, recording when', () => {
    const message = queue();
    message.deliver(first);
    expect(message.status).toBe('delivered');
    expect(message.isDelivered).toBe(true);
    expect(message.deliveredAt).toEqual(first);
  });

  it('is idempotent: a second delivery keeps the first deliveredAt', () => {
    const message = queue();
    message.deliver(first);
    message.deliver(new Date('2030-06-16T00:00:00.000Z'));
    expect(message.deliveredAt).toEqual(first);
    expect(message.status).toBe('delivered');
  });
});

describe('Message.giveUp', () => {
  it('queued → failed, with no deliveredAt; settled from then on', () => {
    const message = queue();
    expect(message.isSettled).toBe(false);
    message.giveUp();
    expect(message.toSnapshot()).toEqual(expect.objectContaining({ status: 'failed', deliveredAt: null }));
    expect(message.isSettled).toBe(true);
  });

  it('leaves a delivered message delivered', () => {
    const message = queue();
    message.deliver(now);
    message.giveUp();
    expect(message.status).toBe('delivered');
  });

  it('a late successful delivery of a failed message counts', () => {
    const message = queue();
    message.giveUp();
    message.deliver(now);
    expect(message.toSnapshot()).toEqual(expect.objectContaining({ status: 'delivered', deliveredAt: now }));
  });
});

describe('Message', () => {
  it('restore copies the props; getters read them', () => {
    const props: MessageProps = {
      id,
      text: 'hi',
      status: 'delivered',
      createdAt: now,
      deliveredAt: now,
      ownerId: 2,
      version: 2,
    };
    const message = Message.restore(props);
    props.text = 'changed';
    expect([message.id, message.text, message.status, message.createdAt, message.deliveredAt, message.ownerId]).toEqual(
      [id, 'hi', 'delivered', now, now, 2],
    );
  });

  it('has the statuses queued, delivered and failed', () => {
    expect(MESSAGE_STATUSES).toEqual(['queued', 'delivered', 'failed']);
  });

  it('MessageNotFoundError is not_found', () => {
    const error = new MessageNotFoundError(id);
    expect(error).toBeInstanceOf(DomainError);
    expect(error).toMatchObject({
      kind: 'not_found',
      message: `Message ${id} does not exist.`,
    });
  });
});
