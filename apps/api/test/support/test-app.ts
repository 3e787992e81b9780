import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { resetDatabase, testDatabaseUrl } from '@petstore/testing';
import { __resetOutOfContextForTests } from 'nestjs-pino/PinoLogger';
import { Client } from 'pg';
import type { RootLogger } from '../../src/common/logging/logging';
import { ConfigOverrides, loadConfig, withConfig } from '../../src/config/app-config';
import { createApp } from '../../src/create-app';
import { OpenApiContract } from './openapi-contract';

export const ADMIN_KEY = 'test-admin-key-0123456789abcdefghijklmnop';

export interface StartOptions {
  rateLimitPrefix?: string;
  /** Where the app logs (default: nowhere). */
  logger?: RootLogger;
}

export interface RequestOptions {
  /** Sent as JSON (with Content-Type: application/json) unless `raw` is given. */
  body?: unknown;
  /** Sent as it is, with only the headers given (bytes for what is not UTF-8). */
  raw?: string | Uint8Array;
  /** The API key to send as Bearer; null sends none. Default: none. */
  key?: string | null;
  headers?: Record<string, string>;
}

export interface TestResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
  /** The body exactly as received. */
  text: string;
}

/**
 * The real application (createApp, as main.ts uses it) listening on a free port,
 * on this jest worker's own PostgreSQL database, emptied first. Every response is
 * checked against the OpenAPI description the app serves.
 */
export class TestApp {
  private contract!: OpenApiContract;
  readonly violations: string[] = [];

  private constructor(
    readonly app: NestFastifyApplication,
    readonly baseUrl: string,
    readonly databaseUrl: string,
  ) {}

  /** Starts on this worker's database, emptied first. */
  static async start(overrides: ConfigOverrides = {}, options: StartOptions = {}): Promise<TestApp> {
    const databaseUrl = await testDatabaseUrl();
    await resetDatabase(databaseUrl);
    return TestApp.startOn(databaseUrl, overrides, options);
  }

  /** Starts another instance on a database as it is (a restart, or a second instance). */
  static async startOn(
    databaseUrl: string,
    overrides: ConfigOverrides = {},
    options: StartOptions = {},
  ): Promise<TestApp> {
    // Limits off unless a test sets them: other tests hold many units per customer. Admission stays at the product's
    // default (on): a test that fires more concurrent requests at one instance than its limit turns it off itself
    // (store-concurrency.e2e.spec.ts).
    const defaults = withConfig(loadConfig({}), {
      auth: { adminApiKey: ADMIN_KEY, rateLimitPerMinute: 0 },
      messaging: { worker: false },
      ordering: { maxOpenUnitsPerCustomer: 0 },
    });
    const config = withConfig(defaults, overrides);
    // nestjs-pino keeps the first logger it is given for the whole process (`new Logger(context)` lines): a jest
    // file may start several apps, each with its own logger, so the latest app's is the one those lines reach.
    __resetOutOfContextForTests();
    const app = await createApp({ config, databaseUrl, logger: false, ...options });
    await app.listen({ port: 0, host: '127.0.0.1' });
    const address = app.getHttpServer().address() as { port: number };
    const testApp = new TestApp(app, `http://127.0.0.1:${address.port}`, databaseUrl);
    testApp.contract = OpenApiContract.of(await fetch(`${testApp.baseUrl}/openapi.json`).then((r) => r.text()));
    return testApp;
  }

  async request<T = any>(method: string, path: string, options: RequestOptions = {}): Promise<TestResponse<T>> {
    const headers: Record<string, string> = { ...options.headers };
    if (options.key) headers['authorization'] = `Bearer ${options.key}`;
    let payload: string | Uint8Array | undefined = options.raw;
    if (options.body !== undefined && options.raw === undefined) {
      payload = JSON.stringify(options.body);
      headers['content-type'] ??= 'application/json';
    }
    const response = await fetch(this.baseUrl + path, { method, headers, body: payload });
    const text = await response.text();
    let body: unknown = text;
    if (response.headers.get('content-type')?.startsWith('application/json') && text) body = JSON.parse(text);
    if (!text) body = undefined;
    const contentType = response.headers.get('content-type');
    const problems = this.contract.check(method, path, response.status, contentType, body, response.headers);
    this.violations.push(...problems);
    if (problems.length)
      throw new Error(`Response does not match the OpenAPI description:\n${problems.join('\n')}\nBody: ${text}`);
    return { status: response.status, headers: response.headers, body: body as T, text };
  }

  get<T = any>(path: string, options?: RequestOptions) {
    return this.request<T>('GET', path, options);
  }
  post<T = any>(path: string, options?: RequestOptions) {
    return this.request<T>('POST', path, options);
  }
  patch<T = any>(path: string, options?: RequestOptions) {
    return this.request<T>('PATCH', path, options);
  }
  put<T = any>(path: string, options?: RequestOptions) {
    return this.request<T>('PUT', path, options);
  }
  delete<T = any>(path: string, options?: RequestOptions) {
    return this.request<T>('DELETE', path, options);
  }

  /** Signs up a customer and returns its API key. */
  async customer(name = 'Customer'): Promise<{ key: string; id: number }> {
    const response = await this.post('/accounts', { body: { name } });
    if (response.status !== 201) throw new Error(`sign-up failed: ${response.status}`);
    return { key: response.body.apiKey.key, id: response.body.account.id };
  }

  /** A query straight on this app's database, for what the API does not show (yet). */
  async sql<R extends Record<string, unknown> = Record<string, any>>(
    text: string,
    params: unknown[] = [],
  ): Promise<R[]> {
    const client = new Client({ connectionString: this.databaseUrl });
    await client.connect();
    try {
      return (await client.query<R>(text, params)).rows;
    } finally {
      await client.end();
    }
  }

  /** Signs up `count` customers and returns their API keys. */
  async customers(count: number, name = 'Customer'): Promise<string[]> {
    const keys: string[] = [];
    for (let i = 0; i < count; i++) keys.push((await this.customer(`${name} ${i}`)).key);
    return keys;
  }

  async close(): Promise<void> {
    await this.app.close();
  }
}

/** Expects the Error shape with this status and code. */
export function expectError(response: TestResponse, status: number, code: string): void {
  expect({ status: response.status, code: response.body?.code }).toEqual({ status, code });
  expect(response.body).toEqual(
    expect.objectContaining({ code, status, message: expect.any(String), documentationUrl: `/docs/errors#${code}` }),
  );
}
