import { InvalidValueError } from '../common/domain-error';
import { CATALOGUE_EVENT_TYPES, WebhookAudience, WebhookEndpoint } from './webhook';

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

  it("gives everyone the catalogue's events, to receive, to subscribe to and to see; the rest as before", () => {
    for (const type of CATALOGUE_EVENT_TYPES) {
      expect(WebhookAudience.receives(customer, type, null)).toBe(true);
      expect(WebhookAudience.receives(admin, type, null)).toBe(true);
      expect(WebhookAudience.maySubscribe(type, false)).toBe(true);
      expect(WebhookAudience.sees(customer, type, null)).toBe(true);
    }
    expect(WebhookAudience.maySubscribe('pet.status_changed', false)).toBe(false);
    expect(WebhookAudience.sees(customer, 'pet.status_changed', null)).toBe(false);
    expect(WebhookAudience.sees(customer, 'order.placed', 8)).toBe(false);
    expect(WebhookAudience.sees(customer, 'order.placed', 7)).toBe(true);
    expect(WebhookAudience.sees(admin, 'message.delivered', 8)).toBe(true);
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

describe('WebhookEndpoint.change and rotateSecret', () => {
  const created = (ownerIsAdmin = false) =>
    WebhookEndpoint.create({
      id: 3,
      ownerId: 7,
      ownerIsAdmin,
      url: 'https://example.com/h',
      events: ['order.placed'],
      secret: 'whsec_old',
      now: new Date(0),
    });
  const now = new Date(1000);
  const disabled = () => WebhookEndpoint.restore({ ...created().toSnapshot(), disabledAt: new Date(500) });

  it('changes the URL and the events by the rules of creation; what is left out stays', () => {
    const changed = created().change({ events: ['order.completed', 'order.completed'] }, false, now);
    expect(changed.toSnapshot()).toEqual({ ...created().toSnapshot(), events: ['order.completed'] });
    expect(created().change({ url: 'https://example.com/new' }, false, now).url).toBe('https://example.com/new');
    expect(() => created().change({ events: [] }, false, now)).toThrow(InvalidValueError);
    expect(() => created().change({ events: ['pet.status_changed'] }, false, now)).toThrow(InvalidValueError);
    expect(created(true).change({ events: ['pet.status_changed'] }, true, now).events).toEqual(['pet.status_changed']);
    expect(() => created().change({ url: `https://example.com/${'x'.repeat(2048)}` }, false, now)).toThrow(
      InvalidValueError,
    );
  });

  it('enables a disabled endpoint again; disabling keeps the first time it was disabled', () => {
    expect(disabled().change({ enabled: true }, false, now).disabledAt).toBeNull();
    expect(created().change({ enabled: false }, false, now).disabledAt).toEqual(now);
    expect(disabled().change({ enabled: false }, false, now).disabledAt).toEqual(new Date(500));
    expect(disabled().change({}, false, now).disabledAt).toEqual(new Date(500));
  });

  it('signs with the new secret and, until the window ends, the previous one; a second rotation replaces it', () => {
    const rotated = created().rotateSecret('whsec_new', new Date(2000));
    expect(rotated.secret).toBe('whsec_new');
    expect(rotated.signingSecrets(new Date(1999))).toEqual(['whsec_new', 'whsec_old']);
    expect(rotated.signingSecrets(new Date(2000))).toEqual(['whsec_new']);
    const again = rotated.rotateSecret('whsec_newer', new Date(3000));
    expect(again.signingSecrets(new Date(1500))).toEqual(['whsec_newer', 'whsec_new']);
    expect(created().signingSecrets(now)).toEqual(['whsec_old']);
  });
});
