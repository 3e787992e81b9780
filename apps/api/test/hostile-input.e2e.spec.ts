import { StoreFixtures } from './support/store-fixtures';
import { ADMIN_KEY, TestApp, TestResponse, expectError } from './support/test-app';

/** The `details` of a validation error, as `field: message` lines. */
function fields(response: TestResponse): string[] {
  return (response.body.details ?? []).map((d: { field: string }) => d.field);
}

describe('hostile input gets a 400, never a 500 (HTTP, real PostgreSQL)', () => {
  let api: TestApp;
  let store: StoreFixtures;
  let customer: string;

  beforeAll(async () => {
    api = await TestApp.start();
    store = await StoreFixtures.on(api);
    customer = (await api.customer('Hostile')).key;
  });
  afterAll(async () => {
    await store.close();
    await api.close();
  });

  const count = async (table: string) => Number((await api.sql(`SELECT count(*) AS n FROM ${table}`))[0].n);

  /** A message holding `text` is refused (400 validation_failed) and none is queued. */
  async function expectMessageRefused(text: string): Promise<void> {
    const before = await count('messages');
    expectError(await api.post('/messages', { key: customer, body: { message: text } }), 400, 'validation_failed');
    expect(await count('messages')).toBe(before);
  }

  describe('U+0000 anywhere in a path, a query or a body', () => {
    it('refuses a sign-up whose name holds U+0000, naming the field, and creates nothing', async () => {
      const before = await count('accounts');
      const response = await api.post('/accounts', { body: { name: '\u0000' } });
      expectError(response, 400, 'validation_failed');
      expect(response.body.details).toEqual([{ field: 'name', message: 'must not contain U+0000' }]);
      expect(await count('accounts')).toBe(before);
    });

    it('refuses it in a query parameter', async () => {
      const response = await api.get('/pets?name=%00', { key: customer });
      expectError(response, 400, 'validation_failed');
      expect(fields(response)).toEqual(['name']);
    });

    it('refuses it in a query parameter an operation does not even read', async () => {
      expectError(await api.get('/accounts/me?x=a%00b', { key: customer }), 400, 'validation_failed');
    });

    it('refuses it in a path parameter', async () => {
      const response = await api.get('/messages/%00', { key: customer });
      expectError(response, 400, 'validation_failed');
      expect(fields(response)).toEqual(['messageId']);
    });

    it('leaves a URL that matches no route to the 404 (found by the fuzz test)', async () => {
      expectError(await api.get('/store/a%00b', { key: customer }), 404, 'not_found');
      expectError(await api.get('/nowhere?x=%00', { key: customer }), 404, 'not_found');
    });

    it('refuses it in any text field of any body, and changes nothing', async () => {
      const category = await api.post('/categories', {
        key: ADMIN_KEY,
        body: { name: 'Nul kind', description: 'kept' },
      });
      const patched = await api.patch(`/categories/${category.body.id}`, {
        key: ADMIN_KEY,
        body: { description: 'x\u0000y' },
      });
      expectError(patched, 400, 'validation_failed');
      expect(fields(patched)).toEqual(['description']);
      expect((await api.get(`/categories/${category.body.id}`, { key: ADMIN_KEY })).body.description).toBe('kept');

      await expectMessageRefused('hi\u0000');
    });

    it('refuses it in nested values and in keys, naming where', async () => {
      const nested = await api.post('/accounts', { body: { name: 'Ok', extra: { list: ['fine', 'bad\u0000'] } } });
      expectError(nested, 400, 'validation_failed');
      expect(fields(nested)).toEqual(['extra.list.1']);
      const key = await api.post('/accounts', { body: { name: 'Ok', 'na\u0000me': 'x' } });
      expectError(key, 400, 'validation_failed');
      expect(fields(key)).toEqual(['na\\u0000me']);
    });
  });

  describe('an unpaired surrogate (a JSON escape of half a character) in any text of a body', () => {
    // JSON.stringify writes a lone surrogate as its escape (`"\ud800"`), as a client sending one would.
    it('is refused, naming the field, and changes nothing (it was stored as U+FFFD, answered as sent)', async () => {
      const category = await api.post('/categories', {
        key: ADMIN_KEY,
        body: { name: 'Half kind', description: 'kept' },
      });
      for (const description of ['a \ud800 b', 'ends \udfff', '\udc00\ud800']) {
        const patched = await api.patch(`/categories/${category.body.id}`, { key: ADMIN_KEY, body: { description } });
        expectError(patched, 400, 'validation_failed');
        expect(patched.body.details).toEqual([
          { field: 'description', message: 'must not contain an unpaired surrogate (U+D800–U+DFFF)' },
        ]);
      }
      expect((await api.get(`/categories/${category.body.id}`, { key: ADMIN_KEY })).body.description).toBe('kept');

      await expectMessageRefused('hi \ud83d');
    });

    it('takes a pair (a character outside the BMP) and gives it back as sent', async () => {
      const response = await api.post('/categories', {
        key: ADMIN_KEY,
        body: { name: 'Pair kind', description: 'a 🐕 b' },
      });
      expect(response.status).toBe(201);
      expect((await api.get(`/categories/${response.body.id}`, { key: ADMIN_KEY })).body.description).toBe('a 🐕 b');
    });

    it('is named in a key too, escaped in the answer', async () => {
      const key = await api.post('/accounts', { body: { name: 'Ok', 'half\ud800': 'x' } });
      expectError(key, 400, 'validation_failed');
      expect(fields(key)).toEqual(['half\\ud800']);
    });
  });

  describe('nesting depth', () => {
    const nestedArrays = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);
    const nestedObjects = (depth: number) => '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);
    const raw = (path: string, body: string, key?: string, headers: Record<string, string> = {}) =>
      api.post(path, { raw: body, key, headers: { 'content-type': 'application/json', ...headers } });

    it('refuses 20,000 nested arrays (40 KB) with 400 before anything recurses', async () => {
      const response = await raw('/accounts', nestedArrays(20_000));
      expectError(response, 400, 'validation_failed');
      expect(response.body.details).toEqual([{ field: 'body', message: 'is nested deeper than 32 levels' }]);
    });

    it('refuses 8,000 nested objects on an idempotent order (the fingerprint walks them), orders nothing', async () => {
      const before = await count('orders');
      const body = `{"petId":1,"quantity":1,"x":${nestedObjects(8000)}}`;
      const response = await raw('/store/orders', body, customer, { 'idempotency-key': 'deep-1' });
      expectError(response, 400, 'validation_failed');
      expect(fields(response)).toEqual(['body']);
      expect(await count('orders')).toBe(before);
    });

    it('takes 32 levels and refuses 33', async () => {
      // 32 levels: parsed, then refused for what it is (an unknown field), not for its depth.
      const deepest = await raw('/accounts', `{"name":"Deep","x":${nestedArrays(31)}}`);
      expectError(deepest, 400, 'validation_failed');
      expect(fields(deepest)).toEqual(['x']);
      const tooDeep = await raw('/accounts', `{"name":"Deep","x":${nestedArrays(32)}}`);
      expect(fields(tooDeep)).toEqual(['body']);
    });

    it('counts only structure, not brackets inside strings (escaped quotes included)', async () => {
      const name = `\\"${'['.repeat(40)}`;
      const response = await raw('/accounts', `{"name":"${name}"}`);
      expect(response.status).toBe(201);
      expect(response.body.account.name).toBe(`"${'['.repeat(40)}`);
    });

    it('still answers invalid JSON as invalid_json; a prototype key is an unknown field, named', async () => {
      expectError(await raw('/accounts', '{"name":[[[}'), 400, 'invalid_json');
      const proto = await raw('/accounts', '{"name":"x","__proto__":{"admin":true}}');
      expectError(proto, 400, 'validation_failed');
      expect(proto.body.details).toEqual([{ field: '__proto__', message: '__proto__ is not a known field' }]);
      const nested = await raw('/accounts', '{"name":"x","constructor":{"prototype":{"admin":true}}}');
      expectError(nested, 400, 'validation_failed');
      expect(nested.body.details).toEqual([{ field: 'constructor', message: 'constructor is not a known field' }]);
    });
  });

  describe('a query string that is not valid percent-encoding (as a path is not)', () => {
    it('is 400 bad_request, whatever the operation; valid escapes are taken', async () => {
      for (const query of ['name=%E0%A4%A', 'name=%FF', 'name=%', 'name=%zz', 'status=available&name=%C3']) {
        const response = await api.get(`/pets?${query}`, { key: ADMIN_KEY });
        expect({ query, status: response.status, code: response.body?.code }).toEqual({
          query,
          status: 400,
          code: 'bad_request',
        });
      }
      expectError(await api.get('/categories?limit=%FF', { key: ADMIN_KEY }), 400, 'bad_request');
      expect((await api.get('/pets?name=%C3%A9t%C3%A9%25', { key: ADMIN_KEY })).status).toBe(200);
    });
  });

  describe('a body that is not UTF-8', () => {
    const bytes = (text: string, latin1: string) =>
      Buffer.concat([Buffer.from(text, 'utf8'), Buffer.from(latin1, 'latin1'), Buffer.from('"}', 'utf8')]);
    const send = (path: string, raw: Uint8Array, contentType = 'application/json') =>
      api.post(path, { raw, key: ADMIN_KEY, headers: { 'content-type': contentType } });

    it('is refused as invalid_json, whatever the charset says, and creates nothing (it stored U+FFFD)', async () => {
      const before = await count('categories');
      for (const contentType of ['application/json', 'application/json; charset=iso-8859-1']) {
        const response = await send('/categories', bytes('{"name":"', 'Café latin'), contentType);
        expectError(response, 400, 'invalid_json');
        expect(response.body.message).toBe('The request body is not valid UTF-8: send JSON in UTF-8 (RFC 8259).');
      }
      // An encoded surrogate (ED A0 80) and a byte cut off its character are not UTF-8 either.
      expectError(await send('/categories', bytes('{"name":"Cut ', '\xed\xa0\x80')), 400, 'invalid_json');
      expectError(await send('/categories', bytes('{"name":"Cut ', '\xc3')), 400, 'invalid_json');
      expect(await count('categories')).toBe(before);
    });

    it('takes the same text in UTF-8, and gives it back as sent', async () => {
      const response = await send('/categories', Buffer.from('{"name":"Café UTF-8"}', 'utf8'));
      expect(response.status).toBe(201);
      expect(response.body.name).toBe('Café UTF-8');
    });
  });

  describe('error responses are bounded whatever the body (issue 24, item 1)', () => {
    it('refuses a 64 KiB JSON array as "not an object", in one entry (it answered 2.7 MB)', async () => {
      const array = `[${Array(32_000).fill('0').join(',')}]`;
      for (const path of ['/messages', '/accounts']) {
        const response = await api.post(path, {
          raw: array,
          key: path === '/messages' ? customer : null,
          headers: { 'content-type': 'application/json' },
        });
        expectError(response, 400, 'validation_failed');
        expect(response.body.details).toEqual([{ field: 'body', message: 'must be a JSON object' }]);
        expect(response.text.length).toBeLessThan(1024);
      }
    });

    it('lists at most 20 of 3,000 problems, says how many there were, and keeps the message short', async () => {
      const before = await count('accounts');
      const body = Object.fromEntries(Array.from({ length: 3000 }, (_, i) => [`x${i}`, 0]));
      const response = await api.post('/accounts', { body: { name: 'Many', ...body } });
      expectError(response, 400, 'validation_failed');
      expect(response.body.details).toHaveLength(20);
      expect(response.body.message).toMatch(/and 2997 more \(20 in details\)\.$/);
      expect(response.body.message.length).toBeLessThan(300);
      expect(response.text.length).toBeLessThan(4096);
      expect(await count('accounts')).toBe(before);
    });

    it('cuts a field name of 10,000 characters in the answer', async () => {
      const response = await api.post('/accounts', { body: { name: 'Long', ['k'.repeat(10_000)]: 1 } });
      expectError(response, 400, 'validation_failed');
      expect(response.body.details[0].field.length).toBeLessThanOrEqual(101);
      expect(response.text.length).toBeLessThan(1024);
    });
  });

  describe('names people read (issue 24, item 7)', () => {
    const invisible = ['Evil\u202Egnp', 'Bell\u0007', 'Zero\u200Bwidth'];

    it('refuses control and format characters in account, category and pet names, naming the field', async () => {
      const category = await api.post('/categories', { key: ADMIN_KEY, body: { name: 'Names' } });
      expect(category.status).toBe(201);
      for (const name of invisible) {
        const answers = [
          await api.post('/accounts', { body: { name } }),
          await api.post('/categories', { key: ADMIN_KEY, body: { name } }),
          await api.patch(`/categories/${category.body.id}`, { key: ADMIN_KEY, body: { name } }),
          await api.post('/pets', { key: ADMIN_KEY, body: { name, categoryId: category.body.id } }),
        ];
        for (const response of answers) {
          expectError(response, 400, 'validation_failed');
          expect(response.body.details).toEqual([
            { field: 'name', message: expect.stringMatching(/^name must not contain control or invisible/) },
          ]);
        }
      }
    });

    it('refuses names mixing Latin with Cyrillic or Greek letters', async () => {
      for (const name of ['D\u043Egs', '\u0391pple']) {
        const category = await api.post('/categories', { key: ADMIN_KEY, body: { name } });
        expectError(category, 400, 'validation_failed');
        expect(category.body.details).toEqual([{ field: 'name', message: expect.stringMatching(/several scripts/) }]);
        expectError(await api.post('/accounts', { body: { name } }), 400, 'validation_failed');
      }
      expect((await api.post('/accounts', { body: { name: 'Собака Шарик' } })).status).toBe(201);
    });

    it('takes a category name as taken after NFKC normalisation and case folding', async () => {
      expect((await api.post('/categories', { key: ADMIN_KEY, body: { name: 'Dogs' } })).status).toBe(201);
      const fullWidth = await api.post('/categories', { key: ADMIN_KEY, body: { name: '\uFF24\uFF2F\uFF27\uFF33' } });
      expectError(fullWidth, 409, 'category_name_taken');
      expectError(
        await api.post('/categories', { key: ADMIN_KEY, body: { name: 'DOGS' } }),
        409,
        'category_name_taken',
      );
      const stored = await api.sql(`SELECT name_key FROM categories WHERE name = 'Dogs'`);
      expect(stored).toEqual([{ name_key: 'dogs' }]);
    });
  });
});
