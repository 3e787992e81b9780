import { randomBytes } from 'node:crypto';
import { lookup as dnsLookup, LookupAddress } from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import { BlockList, isIP } from 'node:net';
import { Injectable } from '@nestjs/common';
import {
  WebhookRequest,
  WebhookResponse,
  WebhookSecrets,
  WebhookSender,
  WebhookUrlPolicy,
} from '@petstore/application';
import { WebhookUrlRefusedError } from '@petstore/domain';
import { Webhook } from 'standardwebhooks';

/** Whether webhooks may go to http:// URLs and to private, loopback and link-local addresses (unsafe). */
export class WebhookNetworkSettings {
  constructor(readonly allowPrivate = false) {}
}

/**
 * Addresses no webhook may reach: private, loopback, link-local, shared (CGNAT), unspecified,
 * multicast, reserved and documentation ranges, in IPv4 and IPv6 (IPv4-mapped IPv6 addresses are
 * checked as the IPv4 address they carry). Node's own BlockList does the matching.
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

/** Whether `address` (an IP literal) is one webhooks may not reach. */
export function isForbiddenAddress(address: string): boolean {
  const bare = address.replace(/^\[|\]$/g, '');
  const version = isIP(bare);
  if (version === 4) return FORBIDDEN.check(bare, 'ipv4');
  if (version !== 6) return true;
  const mapped = /^(?:0{0,4}:){0,4}:?(?:0{0,4}:)?ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(bare);
  if (mapped) return FORBIDDEN.check(mapped[1], 'ipv4');
  const hexMapped = /^(?:0{0,4}:){0,4}:?(?:0{0,4}:)?ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i.exec(bare);
  if (hexMapped) {
    const [high, low] = [parseInt(hexMapped[1], 16), parseInt(hexMapped[2], 16)];
    return FORBIDDEN.check(`${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`, 'ipv4');
  }
  return FORBIDDEN.check(bare, 'ipv6');
}

function resolveAll(hostname: string): Promise<LookupAddress[]> {
  return new Promise((resolve, reject) =>
    dnsLookup(hostname, { all: true, verbatim: true }, (error, addresses) =>
      error ? reject(error) : resolve(addresses),
    ),
  );
}

function parse(url: string, allowPrivate: boolean): URL {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new WebhookUrlRefusedError('not an absolute URL.');
  }
  const schemes = allowPrivate ? ['https:', 'http:'] : ['https:'];
  if (!schemes.includes(parsed.protocol)) throw new WebhookUrlRefusedError('only https:// URLs are accepted.');
  if (parsed.username || parsed.password) throw new WebhookUrlRefusedError('credentials in the URL are not accepted.');
  if (!parsed.hostname) throw new WebhookUrlRefusedError('the URL has no host.');
  return parsed;
}

/** At creation: https only, and every address the host resolves to (now) must be public. */
@Injectable()
export class DnsWebhookUrlPolicy extends WebhookUrlPolicy {
  constructor(private readonly settings: WebhookNetworkSettings) {
    super();
  }

  async check(url: string): Promise<void> {
    const { hostname } = parse(url, this.settings.allowPrivate);
    if (this.settings.allowPrivate) return;
    const host = hostname.replace(/^\[|\]$/g, '');
    if (isIP(host)) {
      if (isForbiddenAddress(host))
        throw new WebhookUrlRefusedError(`${host} is a private, loopback or link-local address.`);
      return;
    }
    let addresses: LookupAddress[];
    try {
      addresses = await resolveAll(host);
    } catch {
      throw new WebhookUrlRefusedError(`${host} does not resolve.`);
    }
    const forbidden = addresses.find((a) => isForbiddenAddress(a.address));
    if (forbidden || addresses.length === 0) {
      throw new WebhookUrlRefusedError(`${host} resolves to a private, loopback or link-local address.`);
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

/**
 * Sends one signed attempt with Node's own http/https client (hand-written around it rather than
 * fetch: its `lookup` option is what lets the connect go only to the checked address). The
 * Standard Webhooks signature comes from the `standardwebhooks` package itself.
 */
@Injectable()
export class HttpWebhookSender extends WebhookSender {
  constructor(private readonly settings: WebhookNetworkSettings) {
    super();
  }

  async send(request: WebhookRequest): Promise<WebhookResponse> {
    let url: URL;
    try {
      url = parse(request.url, this.settings.allowPrivate);
    } catch (error) {
      return { statusCode: null, error: (error as Error).message };
    }
    const host = url.hostname.replace(/^\[|\]$/g, '');
    if (!this.settings.allowPrivate && isIP(host) && isForbiddenAddress(host)) {
      return { statusCode: null, error: `${host} is a forbidden address.` };
    }
    const timestamp = new Date();
    const signature = new Webhook(request.secret).sign(request.eventId, timestamp, request.body);
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
          agent: false,
          ...(this.settings.allowPrivate ? {} : { lookup: guardedLookup as unknown as typeof dnsLookup }),
        },
        (res) => {
          // The status is the answer; the body is read and dropped so that the socket closes cleanly.
          res.on('error', () => undefined);
          res.resume();
          resolve({ statusCode: res.statusCode ?? null, error: null });
        },
      );
      req.on('error', (error: NodeJS.ErrnoException) => {
        const reason = signal.aborted ? `no answer within ${request.timeoutMs} ms` : error.message;
        resolve({ statusCode: null, error: reason });
      });
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
