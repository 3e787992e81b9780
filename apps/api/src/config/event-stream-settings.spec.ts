import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from './app-config';

/** The event stream's settings (EVENTS_NATS_*): off unless the URL is set, checked at start-up. */
describe('loadConfig: the event stream (EVENTS_NATS_*)', () => {
  it('is off by default, with the default stream and subject prefix', () => {
    expect(loadConfig({}).eventStream).toEqual({
      natsUrl: null,
      natsStream: 'PETSTORE_EVENTS',
      natsSubjectPrefix: 'petstore.events',
    });
  });

  it('takes a nats:// or tls:// URL, also from the file EVENTS_NATS_URL_FILE names (it may hold a password)', () => {
    expect(loadConfig({ EVENTS_NATS_URL: 'nats://127.0.0.1:4222' }).eventStream.natsUrl).toBe('nats://127.0.0.1:4222');
    const dir = mkdtempSync(join(tmpdir(), 'petstore-config-'));
    try {
      const path = join(dir, 'nats_url');
      writeFileSync(path, 'tls://relay:secret@broker.internal:4222\n');
      expect(loadConfig({ EVENTS_NATS_URL_FILE: path }).eventStream.natsUrl).toBe(
        'tls://relay:secret@broker.internal:4222',
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it.each([
    ['EVENTS_NATS_URL', 'http://127.0.0.1:4222'],
    ['EVENTS_NATS_STREAM', 'petstore.events'],
    ['EVENTS_NATS_STREAM', 'EVENTS>'],
    ['EVENTS_NATS_SUBJECT_PREFIX', 'petstore.>'],
    ['EVENTS_NATS_SUBJECT_PREFIX', 'petstore..events'],
    ['EVENTS_NATS_SUBJECT_PREFIX', 'petstore events'],
  ])('refuses %s=%s, naming the variable', (variable, value) => {
    expect(() => loadConfig({ [variable]: value })).toThrow(new RegExp(`^Invalid configuration: ${variable} `));
  });
});
