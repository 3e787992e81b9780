import { get } from 'node:http';
import { brotliDecompressSync, gunzipSync, inflateSync } from 'node:zlib';
import { CompressedDocs } from '../src/common/http/compressed-docs';
import { TestApp } from './support/test-app';

/**
 * Issue 48, item 5: the documentation (666 KB of swagger-ui-init.js, 309 KB of /openapi.json, the swagger-ui-dist
 * files) was compressed again for every request, by anyone, without a key. It is compressed once per path and encoding
 * and kept: the same bytes every time, with the headers @fastify/compress gives, and one compression each.
 */
describe('the documentation is compressed once and kept (HTTP, real PostgreSQL)', () => {
  let api: TestApp;
  let docs: CompressedDocs;

  beforeAll(async () => {
    api = await TestApp.start();
    docs = api.app.get(CompressedDocs);
  });
  afterAll(() => api.close());

  /** The bytes as sent (fetch would inflate them), and the headers. */
  function raw(path: string, acceptEncoding: string) {
    return new Promise<{ status: number; headers: Record<string, unknown>; body: Buffer }>((resolve, reject) => {
      get(`${api.baseUrl}${path}`, { headers: { 'accept-encoding': acceptEncoding } }, (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () =>
          resolve({ status: response.statusCode ?? 0, headers: response.headers, body: Buffer.concat(chunks) }),
        );
        response.on('error', reject);
      }).on('error', reject);
    });
  }

  const INFLATE = { br: brotliDecompressSync, gzip: gunzipSync, deflate: inflateSync };
  const PATHS = ['/openapi.json', '/openapi.yaml', '/docs', '/docs/swagger-ui-init.js', '/docs/swagger-ui-bundle.js'];

  it.each(Object.keys(INFLATE) as Array<keyof typeof INFLATE>)(
    'sends the same %s bytes to every request, compressed once per path',
    async (encoding) => {
      const before = docs.compressions;
      let firsts = 0; // what the start-up's own fetch of /openapi.json (gzip) already compressed is not again
      for (const path of PATHS) {
        const plain = await raw(path, 'identity');
        expect({ path, status: plain.status, encoding: plain.headers['content-encoding'] }).toEqual({
          path,
          status: 200,
          encoding: undefined,
        });
        const beforeFirst = docs.compressions;
        const first = await raw(path, encoding);
        firsts += docs.compressions - beforeFirst;
        const afterFirst = docs.compressions;
        const second = await raw(path, `${encoding}, identity;q=0.5`);
        expect({ path, compressedAgain: docs.compressions - afterFirst }).toEqual({ path, compressedAgain: 0 });
        for (const answer of [first, second]) {
          expect(answer.status).toBe(200);
          expect(answer.headers['content-encoding']).toBe(encoding);
          expect(String(answer.headers['vary'])).toMatch(/accept-encoding/i);
          expect(Number(answer.headers['content-length'])).toBe(answer.body.length);
          expect(answer.headers['content-type']).toBe(plain.headers['content-type']);
        }
        expect(second.body.equals(first.body)).toBe(true);
        expect(INFLATE[encoding](first.body).equals(plain.body)).toBe(true);
      }
      expect(firsts).toBeGreaterThanOrEqual(PATHS.length - 1);
      expect(docs.compressions - before).toBe(firsts);
      // Once more each: nothing is compressed again.
      for (const path of PATHS) await raw(path, encoding);
      expect(docs.compressions - before).toBe(firsts);
    },
  );

  it('compresses once for concurrent first requests, and not at all for what the client does not accept', async () => {
    const before = docs.compressions;
    const answers = await Promise.all(Array.from({ length: 8 }, () => raw('/docs/swagger-ui.css', 'br')));
    expect(new Set(answers.map((answer) => answer.body.toString('base64'))).size).toBe(1);
    expect(answers.every((answer) => answer.headers['content-encoding'] === 'br')).toBe(true);
    expect(docs.compressions - before).toBe(1);
    const identity = await raw('/docs/swagger-ui.css', 'identity');
    expect(identity.headers['content-encoding']).toBeUndefined();
    expect(docs.compressions - before).toBe(1);
  });

  it('leaves the API to the compression of each response', async () => {
    const before = docs.compressions;
    const health = await raw('/health/live', 'br');
    expect(health.status).toBe(200);
    expect(docs.compressions).toBe(before);
  });
});
