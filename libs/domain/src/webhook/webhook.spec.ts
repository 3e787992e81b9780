import { InvalidValueError } from '../common/domain-error';
import { WebhookAudience, WebhookEndpoint } from './webhook';

describe('WebhookAudience', () => {
  const customer = { id: 7, isAdmin: false };
  const admin = { id: 1, isAdmin: true };

  it('gives a customer the events of its own orders and messages only', () => {
    expect(WebhookAudience.receives(customer, 'order.placed', 7)).toBe(true);
    expect(WebhookAudience.receives(customer, 'message.delivered', 7)).toBe(true);
    expect(WebhookAudience.receives(customer, 'order.placed', 8)).toBe(false);
    expect(WebhookAudience.receives(customer, 'message.delivered', 8)).toBe(false);
    expect(WebhookAudience.receives(customer, 'pet.status_changed', null)).toBe(false);
  });

  it("gives an administrator every order, the pets' status changes, and its own messages only", () => {
    expect(WebhookAudience.receives(admin, 'order.cancelled', 8)).toBe(true);
    expect(WebhookAudience.receives(admin, 'pet.status_changed', null)).toBe(true);
    expect(WebhookAudience.receives(admin, 'message.delivered', 8)).toBe(false);
    expect(WebhookAudience.receives(admin, 'message.delivered', 1)).toBe(true);
  });
});

describe('WebhookEndpoint.create', () => {
  const base = {
    id: 3,
    ownerId: 7,
    ownerIsAdmin: false,
    url: 'https://example.com/h',
    secret: 'whsec_x',
    now: new Date(0),
  };

  it('keeps each event once', () => {
    const endpoint = WebhookEndpoint.create({ ...base, events: ['order.placed', 'order.placed', 'message.delivered'] });
    expect(endpoint.events).toEqual(['order.placed', 'message.delivered']);
  });

  it.each([[[]], [['order.lost']], [['pet.status_changed']]])('refuses events %j for a customer', (events) => {
    expect(() => WebhookEndpoint.create({ ...base, events })).toThrow(InvalidValueError);
  });

  it('lets an administrator subscribe to pet.status_changed', () => {
    const endpoint = WebhookEndpoint.create({ ...base, ownerIsAdmin: true, events: ['pet.status_changed'] });
    expect(endpoint.events).toEqual(['pet.status_changed']);
  });
});
