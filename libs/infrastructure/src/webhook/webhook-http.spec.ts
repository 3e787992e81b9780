import { createServer } from 'node:http';
import { AddressInfo } from 'node:net';
import ipaddr from 'ipaddr.js';
import { Webhook } from 'standardwebhooks';
import { WebhookUrlRefusedError } from '@petstore/domain';
import {
  DnsWebhookUrlPolicy,
  embeddedIPv4,
  HttpWebhookSender,
  isAllowedPort,
  isForbiddenAddress,
  UNUSABLE_WEBHOOK_URL,
  WebhookNetworkSettings,
} from './webhook-http';

const SECRET = `whsec_${Buffer.alloc(24, 7).toString('base64')}`;

describe('isForbiddenAddress: IPv6 forms that embed an IPv4 address are judged by it', () => {
  // Each form, with a loopback/private IPv4 inside (refused) and with a public one (8.8.8.8, judged by it).
  it.each([
    ['IPv4-compatible', '::127.0.0.1', '::8.8.8.8'],
    ['IPv4-compatible, hex', '::7f00:1', '::808:808'],
    ['mapped', '::ffff:10.0.0.1', null],
    ['mapped, hex', '::ffff:7f00:1', null],
    ['translated (RFC 6145)', '::ffff:0:7f00:1', '::ffff:0:808:808'],
    ['translated, dotted', '::ffff:0:192.168.1.1', null],
    ['6to4', '2002:7f00:1::', '2002:808:808::'],
    ['6to4, private', '2002:c0a8:101::1', null],
    ['Teredo, server address', '2001:0:7f00:1::', null],
    // Client 127.0.0.1 stored inverted: ~0x7f00 = 0x80ff, ~0x0001 = 0xfffe; server 8.8.8.8.
    ['Teredo, client address', '2001:0:808:808::80ff:fffe', '2001:0:808:808::f7f7:f7f7'],
    ['NAT64', '64:ff9b::127.0.0.1', null],
    ['NAT64, hex', '64:ff9b::a9fe:a9fe', null],
  ])('%s: %s is refused', (_form, embedding, publicOne) => {
    expect(isForbiddenAddress(embedding)).toBe(true);
    expect(isForbiddenAddress(`[${embedding}]`)).toBe(true);
    if (publicOne) expect(isForbiddenAddress(publicOne)).toBe(false);
  });

  it('reads the embedded address of each form', () => {
    const of = (address: string) => embeddedIPv4(ipaddr.IPv6.parse(address));
    expect(of('::7f00:1')).toEqual(['127.0.0.1']);
    expect(of('::ffff:7f00:1')).toEqual(['127.0.0.1']);
    expect(of('::ffff:0:7f00:1')).toEqual(['127.0.0.1']);
    expect(of('2002:7f00:1::')).toEqual(['127.0.0.1']);
    expect(of('2001:0:808:808::80ff:fffe')).toEqual(['8.8.8.8', '127.0.0.1']);
    expect(of('64:ff9b::7f00:1')).toEqual(['127.0.0.1']);
    expect(of('2606:4700::1111')).toEqual([]);
  });

  it('still allows public addresses, and refuses what is not an address', () => {
    expect(isForbiddenAddress('8.8.8.8')).toBe(false);
    expect(isForbiddenAddress('2606:4700:4700::1111')).toBe(false);
    expect(isForbiddenAddress('127.0.0.1')).toBe(true);
    expect(isForbiddenAddress('::1')).toBe(true);
    expect(isForbiddenAddress('::')).toBe(true);
    expect(isForbiddenAddress('example.com')).toBe(true);
  });
});

describe('isAllowedPort: 443 or 1024 and above', () => {
  it.each([
    ['https://example.com/x', true],
    ['https://example.com:443/x', true],
    ['https://example.com:1024/x', true],
    ['https://example.com:8443/x', true],
    ['https://example.com:65535/x', true],
    ['https://example.com:22/x', false],
    ['https://example.com:25/x', false],
    ['https://example.com:80/x', false],
    ['https://example.com:1023/x', false],
    // http:// (only with WEBHOOKS_ALLOW_PRIVATE) leaves out its default port, 80: refused as any port below 1024.
    ['http://127.0.0.1/hooks', false],
    ['http://127.0.0.1:80/hooks', false],
    ['http://127.0.0.1:8080/hooks', true],
  ])('%s → %s', (url, allowed) => expect(isAllowedPort(new URL(url))).toBe(allowed));
});

describe('DnsWebhookUrlPolicy with WEBHOOKS_ALLOW_PRIVATE: private addresses and http://, the port rule kept', () => {
  const policy = new DnsWebhookUrlPolicy(new WebhookNetworkSettings(true));

  it.each(['http://127.0.0.1/hooks', 'http://localhost:22/hooks', 'https://10.0.0.1:25/hooks'])(
    'refuses %s',
    async (url) => {
      await expect(policy.check(url)).rejects.toThrow(WebhookUrlRefusedError);
    },
  );

  it.each(['http://127.0.0.1:8080/hooks', 'https://10.0.0.1/hooks', 'http://localhost:3001/hooks'])(
    'accepts %s',
    async (url) => {
      await expect(policy.check(url)).resolves.toBeUndefined();
    },
  );
});

describe('DnsWebhookUrlPolicy: one answer for every unusable URL', () => {
  const policy = new DnsWebhookUrlPolicy(new WebhookNetworkSettings(false));

  it.each([
    'not a url',
    'http://example.com/x',
    'https://user:pw@example.com/x',
    'https://example.com:22/x',
    'https://[::127.0.0.1]/x',
    'https://[2001:0:7f00:1::]/x',
    'https://localhost/x',
    'https://does-not-exist.invalid/x',
    // Moved down from webhooks.e2e (which keeps one of each kind, for the 400 and its one message, over HTTP).
    'https://127.0.0.1/hook',
    'https://10.1.2.3/hook',
    'https://192.168.1.1/hook',
    'https://172.16.0.1/hook',
    'https://169.254.169.254/latest/meta-data',
    'https://[::1]/hook',
    'https://[fe80::1]/hook',
    'https://[fd00::1]/hook',
    'https://[::ffff:127.0.0.1]/hook',
    'https://[::ffff:0:7f00:1]/hook',
    'https://[2002:7f00:1::]/hook',
    'https://[2001:0:808:808::80ff:fffe]/hook',
    'https://[64:ff9b::10.0.0.1]/hook',
    'https://example.com:25/hook',
    'https://example.com:1023/hook',
  ])('%s', async (url) => {
    await expect(policy.check(url)).rejects.toThrow(WebhookUrlRefusedError);
    await expect(policy.check(url)).rejects.toThrow(`url refused: ${UNUSABLE_WEBHOOK_URL}`);
  });
});

describe('HttpWebhookSender: failures are categories, without hosts, addresses or library text', () => {
  it('refuses a forbidden embedded address and a low port at connect', async () => {
    const sender = new HttpWebhookSender(new WebhookNetworkSettings(false));
    for (const url of [
      'https://[::ffff:0:7f00:1]:8443/x',
      'https://[64:ff9b::7f00:1]:8443/x',
      'https://[2002:7f00:1::]/',
    ]) {
      expect(await sender.send({ url, eventId: 'e', body: '{}', secrets: [SECRET], timeoutMs: 1000 })).toEqual({
        statusCode: null,
        error: 'forbidden_address',
      });
    }
    const lowPort = await sender.send({
      url: 'https://8.8.8.8:22/',
      eventId: 'e',
      body: '{}',
      secrets: [SECRET],
      timeoutMs: 1000,
    });
    expect(lowPort).toEqual({ statusCode: null, error: 'invalid_url' });
  });

  it('answers connection_refused and tls_error as such', async () => {
    const sender = new HttpWebhookSender(new WebhookNetworkSettings(true));
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const refused = await sender.send({
      url: `http://127.0.0.1:${port}/`,
      eventId: 'e',
      body: '{}',
      secrets: [SECRET],
      timeoutMs: 2000,
    });
    expect(refused).toEqual({ statusCode: null, error: 'connection_refused' });

    // A plain-HTTP server spoken to in TLS: the handshake fails.
    const plain = createServer((_req, res) => res.end());
    await new Promise<void>((resolve) => plain.listen(0, '127.0.0.1', resolve));
    try {
      const url = `https://127.0.0.1:${(plain.address() as AddressInfo).port}/`;
      expect(await sender.send({ url, eventId: 'e', body: '{}', secrets: [SECRET], timeoutMs: 2000 })).toEqual({
        statusCode: null,
        error: 'tls_error',
      });
    } finally {
      plain.closeAllConnections();
      await new Promise((resolve) => plain.close(resolve));
    }
  });
});

describe('HttpWebhookSender: signatures during a secret rotation', () => {
  it('signs with every secret given, space-separated; standardwebhooks verifies either, no other', async () => {
    const previous = `whsec_${Buffer.alloc(32, 9).toString('base64')}`;
    const other = `whsec_${Buffer.alloc(32, 3).toString('base64')}`;
    const received: { headers: Record<string, string>; body: string }[] = [];
    const server = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
      req.on('end', () => {
        received.push({ headers: req.headers as Record<string, string>, body });
        res.end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
      const sender = new HttpWebhookSender(new WebhookNetworkSettings(true));
      const body = '{"type":"order.placed"}';
      const both = await sender.send({ url, eventId: 'msg_1', body, secrets: [SECRET, previous], timeoutMs: 2000 });
      expect(both).toEqual({ statusCode: 200, error: null });
      const { headers } = received[0];
      expect(headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+=* v1,[A-Za-z0-9+/]+=*$/);
      expect(new Webhook(SECRET).verify(body, headers)).toEqual({ type: 'order.placed' });
      expect(new Webhook(previous).verify(body, headers)).toEqual({ type: 'order.placed' });
      expect(() => new Webhook(other).verify(body, headers)).toThrow();
      await sender.send({ url, eventId: 'msg_2', body, secrets: [SECRET], timeoutMs: 2000 });
      expect(received[1].headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
      expect(() => new Webhook(previous).verify(body, received[1].headers)).toThrow();
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
