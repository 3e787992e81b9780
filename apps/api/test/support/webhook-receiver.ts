import { createServer, IncomingHttpHeaders, Server } from 'node:http';
import { AddressInfo } from 'node:net';

export interface ReceivedWebhook {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  json: { type: string; timestamp: string; data: Record<string, unknown>; position?: string };
}

/** A local receiver of webhooks: records every POST; `answer` decides each status (default 200). */
export class WebhookReceiver {
  readonly received: ReceivedWebhook[] = [];
  answer: (request: ReceivedWebhook) => number = () => 200;
  /** Resolves when the receiver may answer this request (default: at once). */
  hold: (request: ReceivedWebhook) => Promise<void> = () => Promise.resolve();
  private server!: Server;
  url = '';

  static async start(): Promise<WebhookReceiver> {
    const receiver = new WebhookReceiver();
    receiver.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        const request = { path: req.url ?? '', headers: req.headers, body, json: JSON.parse(body) };
        receiver.received.push(request);
        const status = receiver.answer(request);
        void receiver.hold(request).then(() => {
          res.statusCode = status;
          res.end();
        });
      });
    });
    await new Promise<void>((resolve) => receiver.server.listen(0, '127.0.0.1', resolve));
    receiver.url = `http://127.0.0.1:${(receiver.server.address() as AddressInfo).port}`;
    return receiver;
  }

  to(path: string): ReceivedWebhook[] {
    return this.received.filter((r) => r.path === path);
  }

  /** The `n`th request (1-based) to `path`, once it came. */
  nth(path: string, n: number): Promise<ReceivedWebhook> {
    return eventually(
      () => this.to(path),
      (r) => r.length >= n,
    ).then((r) => r[n - 1]);
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

/** Polls `probe` until `done` holds (every 50 ms); throws with the last value after `timeoutMs`. */
export async function eventually<T>(
  probe: () => Promise<T> | T,
  done: (value: T) => boolean,
  timeoutMs = 20_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (done(value)) return value;
    if (Date.now() > deadline)
      throw new Error(`Not reached within ${timeoutMs} ms; last value: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
