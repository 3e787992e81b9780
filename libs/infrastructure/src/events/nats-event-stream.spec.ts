import { natsConnectionOptions } from './nats-event-stream';

describe('natsConnectionOptions (EVENTS_NATS_URL as nats.js takes it)', () => {
  it('takes a user and password out of the URL as options: nats.js does not read them there', () => {
    expect(natsConnectionOptions('nats://relay:s%40cret@broker.internal:4222')).toEqual({
      servers: 'nats://broker.internal:4222',
      user: 'relay',
      pass: 's@cret',
    });
  });

  it('reads a user alone as a token, and a URL without credentials as the server alone', () => {
    expect(natsConnectionOptions('nats://t0ken@127.0.0.1:4222')).toEqual({
      servers: 'nats://127.0.0.1:4222',
      token: 't0ken',
    });
    expect(natsConnectionOptions('nats://127.0.0.1:4222')).toEqual({ servers: 'nats://127.0.0.1:4222' });
  });

  it('asks for TLS with tls://', () => {
    expect(natsConnectionOptions('tls://broker.internal:4222')).toEqual({
      servers: 'tls://broker.internal:4222',
      tls: {},
    });
  });
});
