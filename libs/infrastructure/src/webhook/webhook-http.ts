import { randomBytes } from 'node:crypto';
import { lookup as dnsLookup, LookupAddress } from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import { BlockList, isIP } from 'node:net';
import { Injectable, Logger } from '@nestjs/common';
import {
  WebhookErrorCategory,
  WebhookRequest,
  WebhookResponse,
  WebhookSecrets,
  WebhookSender,
  WebhookUrlPolicy,
} from '@petstore/application';
import { WebhookUrlRefusedError } from '@petstore/domain';
import ipaddr from 'ipaddr.js';
import { Webhook } from 'standardwebhooks';

/** Whether webhooks may go to http:// URLs and to private, loopback and link-local addresses (unsafe). */
export class WebhookNetworkSettings {
  constructor(readonly allowPrivate = false) {}
}

/**
 * Addresses no webhook may reach: private, loopback, link-local, shared (CGNAT), unspecified,
 * multicast, reserved and documentation ranges, in IPv4 and IPv6 (IPv6 forms that embed an IPv4
 * address are also checked as the IPv4 address they carry). Node's own BlockList does the matching.
 */
const FORBIDDEN = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  FORBIDDEN.addSubnet(network, prefix, 'ipv4');
}
for (const [network, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['64:ff9b::', 96],
  ['64:ff9b:1::', 48],
  ['100::', 64],
  ['2001:db8::', 32],
  ['fc00::', 7],
  ['fe80::', 10],
  ['fec0::', 10],
  ['ff00::', 8],
] as const) {
  FORBIDDEN.addSubnet(network, prefix, 'ipv6');
}

/** The IPv4 address in two 16-bit groups of an IPv6 address. */
function ipv4Of(high: number, low: number): string {
  return `${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`;
}

/**
 * The IPv4 addresses an IPv6 address carries, in every form that embeds one: IPv4-compatible
 * `::a.b.c.d` (RFC 4291, deprecated), mapped `::ffff:a.b.c.d`, translated `::ffff:0:a.b.c.d`
 * (RFC 6145), NAT64 `64:ff9b::a.b.c.d` (RFC 6052), 6to4 `2002:AABB:CCDD::/48` (RFC 3056) and Teredo
 * `2001:0:SSSS:SSSS:…:CCCC:CCCC` (RFC 4380: the server's address, and the client's, stored with every
 * bit inverted). ipaddr.js names these ranges (`range()`), but hands back the embedded address only
 * for the mapped form, and does not know the IPv4-compatible one at all: the groups are read here.
 */
export function embeddedIPv4(address: ipaddr.IPv6): string[] {
  const p = address.parts;
  switch (address.range()) {
    case 'ipv4Mapped':
    case 'rfc6145':
      return [ipv4Of(p[6], p[7])];
    case 'rfc6052':
      // 64:ff9b::/96 carries it in the last 32 bits; 64:ff9b:1::/48 (local use) is refused whole (FORBIDDEN).
      return p[1] === 0xff9b && p[2] === 0 ? [ipv4Of(p[6], p[7])] : [];
    case '6to4':
      return [ipv4Of(p[1], p[2])];
    case 'teredo':
      return [ipv4Of(p[2], p[3]), ipv4Of(~p[6] & 0xffff, ~p[7] & 0xffff)];
  }
  // IPv4-compatible: 96 zero bits, then the IPv4 address (`::` and `::1` fall here too, and stay refused).
  if (p.slice(0, 6).every((group) => group === 0)) return [ipv4Of(p[6], p[7])];
  return [];
}

/**
 * Whether `address` (an IP literal, bracketed or not) is one webhooks may not reach: ipaddr.js
 * parses it (every textual form); an IPv6 address that embeds an IPv4 one is refused when that IPv4
 * address is, and by its own range otherwise.
 */
export function isForbiddenAddress(address: string): boolean {
  const bare = address.replace(/^\[|\]$/g, '');
  if (!isIP(bare)) return true;
  const parsed = ipaddr.parse(bare);
  if (parsed.kind() === 'ipv4') return FORBIDDEN.check(parsed.toString(), 'ipv4');
  const v6 = parsed as ipaddr.IPv6;
  if (embeddedIPv4(v6).some((v4) => FORBIDDEN.check(v4, 'ipv4'))) return true;
  return FORBIDDEN.check(v6.toNormalizedString(), 'ipv6');
}

function resolveAll(hostname: string): Promise<LookupAddress[]> {
  return new Promise((resolve, reject) =>
    dnsLookup(hostname, { all: true, verbatim: true }, (error, addresses) =>
      error ? reject(error) : resolve(addresses),
    ),
  );
}

/**
 * Ports a webhook may go to: the default (443, or 80 for http:// where allowed) and 443 written out,
 * or 1024 and above. The well-known ports below 1024 are where SSH, SMTP, LDAP and other services
 * that are not webhook receivers listen; a receiver on a port of its own uses one above.
 */
export function isAllowedPort(url: URL): boolean {
  // The port the connection goes to: a URL leaves out its scheme's default (80 for http://, with
  // WEBHOOKS_ALLOW_PRIVATE), which is judged as any other (the port rule stays with that setting).
  const port = url.port === '' ? (url.protocol === 'http:' ? 80 : 443) : Number(url.port);
  return port === 443 || port >= 1024;
}

/** Why a URL cannot receive webhooks: for the operator's log, never for the response (it may name hosts). */
class UnusableUrl extends Error {
  constructor(
    readonly category: 'invalid_url' | 'forbidden_address',
    reason: string,
  ) {
    super(reason);
  }
}

function parse(url: string, allowPrivate: boolean): URL {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new UnusableUrl('invalid_url', 'not an absolute URL');
  }
  const schemes = allowPrivate ? ['https:', 'http:'] : ['https:'];
  if (!schemes.includes(parsed.protocol)) throw new UnusableUrl('invalid_url', `scheme ${parsed.protocol} refused`);
  if (parsed.username || parsed.password) throw new UnusableUrl('invalid_url', 'credentials in the URL');
  if (!parsed.hostname) throw new UnusableUrl('invalid_url', 'no host');
  if (!isAllowedPort(parsed)) throw new UnusableUrl('invalid_url', `port ${parsed.port || 80} refused`);
  return parsed;
}

/**
 * The one answer for every URL refused at creation: which rule failed is not told, so that a
 * caller cannot learn from it whether a name resolves, or to what (internal DNS). The log has it.
 */
export const UNUSABLE_WEBHOOK_URL =
  'the URL cannot receive webhooks: it must be https://, without credentials, on port 443 or 1024-65535, ' +
  'and its host must resolve only to public addresses.';

/** At creation: https only, an allowed port, and every address the host resolves to (now) must be public. */
@Injectable()
export class DnsWebhookUrlPolicy extends WebhookUrlPolicy {
  private readonly logger = new Logger('WebhookUrlPolicy');

  constructor(private readonly settings: WebhookNetworkSettings) {
    super();
  }

  async check(url: string): Promise<void> {
    try {
      await this.verify(url);
    } catch (error) {
      if (!(error instanceof UnusableUrl)) throw error;
      this.logger.log(`Webhook URL refused (${error.category}): ${error.message}`);
      throw new WebhookUrlRefusedError(UNUSABLE_WEBHOOK_URL);
    }
  }

  private async verify(url: string): Promise<void> {
    const { hostname } = parse(url, this.settings.allowPrivate);
    if (this.settings.allowPrivate) return;
    const host = hostname.replace(/^\[|\]$/g, '');
    if (isIP(host)) {
      if (isForbiddenAddress(host)) throw new UnusableUrl('forbidden_address', `${host} is a forbidden address`);
      return;
    }
    let addresses: LookupAddress[];
    try {
      addresses = await resolveAll(host);
    } catch (error) {
      throw new UnusableUrl('forbidden_address', `${host} does not resolve (${(error as Error).message})`);
    }
    const forbidden = addresses.find((a) => isForbiddenAddress(a.address));
    if (forbidden || addresses.length === 0) {
      throw new UnusableUrl('forbidden_address', `${host} resolves to a forbidden address (${forbidden?.address})`);
    }
  }
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A `lookup` for the HTTP client: resolves once, refuses when any address is forbidden, and hands
 * the checked address to the socket, which connects to it and to nothing else (DNS rebinding
 * between a check and the connect cannot happen: there is one resolution).
 */
function guardedLookup(hostname: string, options: { all?: boolean }, callback: LookupCallback): void {
  resolveAll(hostname).then(
    (addresses) => {
      const forbidden = addresses.find((a) => isForbiddenAddress(a.address));
      if (forbidden || addresses.length === 0) {
        const error: NodeJS.ErrnoException = new Error(
          `${hostname} resolves to a forbidden address (${forbidden?.address}).`,
        );
        error.code = 'EFORBIDDENADDRESS';
        callback(error, '');
        return;
      }
      if (options.all) callback(null, addresses);
      else callback(null, addresses[0].address, addresses[0].family);
    },
    (error: NodeJS.ErrnoException) => callback(error, ''),
  );
}

/** OpenSSL's certificate-verification codes (Node passes them through as `error.code`). */
const TLS_CODES = /^(ERR_TLS_|ERR_SSL_|CERT_|DEPTH_ZERO_|SELF_SIGNED_|UNABLE_TO_|HOSTNAME_MISMATCH)/;

/** What an attempt's failure is, as a category that names no host, address or library text. */
export function categorize(error: NodeJS.ErrnoException, timedOut: boolean): WebhookErrorCategory {
  if (timedOut) return 'timeout';
  if (error instanceof UnusableUrl) return error.category;
  const code = error.code ?? '';
  if (code === 'EFORBIDDENADDRESS' || code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'ENODATA') {
    // Not resolving and resolving to a forbidden address are one answer: a customer cannot map internal DNS.
    return 'forbidden_address';
  }
  if (code === 'ECONNREFUSED') return 'connection_refused';
  if (code === 'ETIMEDOUT' || code === 'ESOCKETTIMEDOUT') return 'timeout';
  if (TLS_CODES.test(code) || /\b(SSL|TLS|certificate)\b/i.test(error.message)) return 'tls_error';
  return 'connection_error';
}

/**
 * Sends one signed attempt with Node's own http/https client (hand-written around it rather than
 * fetch: its `lookup` option is what lets the connect go only to the checked address). The
 * Standard Webhooks signature comes from the `standardwebhooks` package itself. A failure is
 * answered as a category; its detail (host, address, library text) goes to the log only.
 */
/**
 * Connections kept open between attempts (a new one per delivery cost a handshake, and a TLS one at that, each time:
 * the most of a delivery's CPU at a thousand a second). Safe with the address guard: it runs when a connection is
 * made (`lookup`), and a kept connection is one that passed it; a receiver's name that now resolves elsewhere is
 * checked when the next connection is made. At most 16 idle connections kept per receiver, most recent used first.
 */
const KEPT = { keepAlive: true, maxFreeSockets: 16, scheduling: 'lifo' as const };
const HTTP_AGENT = new http.Agent(KEPT);
const HTTPS_AGENT = new https.Agent(KEPT);

@Injectable()
export class HttpWebhookSender extends WebhookSender {
  private readonly logger = new Logger('WebhookSender');

  constructor(private readonly settings: WebhookNetworkSettings) {
    super();
  }

  private failed(request: WebhookRequest, error: NodeJS.ErrnoException, timedOut = false): WebhookResponse {
    const category = categorize(error, timedOut);
    const detail = timedOut ? `no answer within ${request.timeoutMs} ms` : error.message;
    this.logger.warn(`Webhook attempt for event ${request.eventId} failed (${category}): ${detail}`);
    return { statusCode: null, error: category };
  }

  async send(request: WebhookRequest): Promise<WebhookResponse> {
    let url: URL;
    try {
      url = parse(request.url, this.settings.allowPrivate);
    } catch (error) {
      return this.failed(request, error as UnusableUrl);
    }
    const host = url.hostname.replace(/^\[|\]$/g, '');
    if (!this.settings.allowPrivate && isIP(host) && isForbiddenAddress(host)) {
      return this.failed(request, new UnusableUrl('forbidden_address', `${host} is a forbidden address`));
    }
    const timestamp = new Date();
    // One `v1,<signature>` per secret, space-separated (Standard Webhooks): a receiver accepts any that verifies.
    const signature = request.secrets
      .map((secret) => new Webhook(secret).sign(request.eventId, timestamp, request.body))
      .join(' ');
    const headers = {
      'content-type': 'application/json',
      'content-length': String(Buffer.byteLength(request.body)),
      'user-agent': 'petstore-webhooks/1',
      'webhook-id': request.eventId,
      'webhook-timestamp': String(Math.floor(timestamp.getTime() / 1000)),
      'webhook-signature': signature,
    };
    const client = url.protocol === 'https:' ? https : http;
    const signal = AbortSignal.timeout(request.timeoutMs);
    return new Promise<WebhookResponse>((resolve) => {
      const req = client.request(
        url,
        {
          method: 'POST',
          headers,
          signal,
          agent: url.protocol === 'https:' ? HTTPS_AGENT : HTTP_AGENT,
          ...(this.settings.allowPrivate ? {} : { lookup: guardedLookup as unknown as typeof dnsLookup }),
        },
        (res) => {
          // The status is the answer; the body is read and dropped so that the socket closes cleanly.
          res.on('error', () => undefined);
          res.resume();
          resolve({ statusCode: res.statusCode ?? null, error: null });
        },
      );
      req.on('error', (error: NodeJS.ErrnoException) => resolve(this.failed(request, error, signal.aborted)));
      req.end(request.body);
    });
  }
}

@Injectable()
export class RandomWebhookSecrets extends WebhookSecrets {
  generate(): string {
    return `whsec_${randomBytes(32).toString('base64')}`;
  }
}
