import fc from 'fast-check';
import { BODY_LIMIT_BYTES } from '../src/common/http-kit/body-limit';
import { MAX_JSON_DEPTH } from '../src/common/http/input-limits.hooks';
import { ADMIN_KEY, TestApp, TestResponse } from './support/test-app';

/**
 * Hostile input in every operation the served OpenAPI description lists: its path parameters, its
 * query and its body get control characters and U+0000, lone surrogates, nesting up to and past the
 * body limit, huge and non-finite numbers and prototype keys. Whatever comes in, the answer is below
 * 500, carries X-Request-Id, is in the Error shape when it is a 4xx, and matches the description
 * (TestApp.request checks every response against it). Seeded: a failure replays the same way.
 */

const RUNS_PER_OPERATION = 25;
const SEED = 20_260_913;

type Json = Record<string, any>;

/** A JSON value written out by hand: keys may repeat or be `__proto__`, numbers may be any token. */
type Value =
  | { kind: 'string'; value: string }
  | { kind: 'number'; token: string }
  | { kind: 'literal'; token: 'true' | 'false' | 'null' }
  | { kind: 'array'; items: Value[] }
  | { kind: 'object'; entries: Array<[string, Value]> }
  | { kind: 'nested'; depth: number; inner: Value };

/** Written without JSON.stringify of the whole, which would drop repeated keys and cannot write 1e999. */
function write(value: Value): string {
  switch (value.kind) {
    case 'string':
      return JSON.stringify(value.value);
    case 'number':
    case 'literal':
      return value.token;
    case 'array':
      return `[${value.items.map(write).join(',')}]`;
    case 'object':
      return `{${value.entries.map(([k, v]) => `${JSON.stringify(k)}:${write(v)}`).join(',')}}`;
    case 'nested':
      return '['.repeat(value.depth) + write(value.inner) + ']'.repeat(value.depth);
  }
}

const PROTOTYPE_KEYS = [
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  'hasOwnProperty',
  'valueOf',
  '__defineGetter__',
];

/** Lone surrogates and NUL-bearing strings, control characters, long (up to `longest`) and plain ones. */
const hostile = (longest: number): fc.Arbitrary<string> =>
  fc.oneof(
    fc.constantFrom(
      '\u0000',
      'a\u0000b',
      '\ud800',
      '\udfff',
      'x\ud83d',
      '\udc00y',
      '\u0001\u001f\u007f',
      '\u2028\u2029',
      '\ufeff',
      '\u200b',
      '../..',
      '%00',
      '%',
      '\\',
      '"',
      "'; DROP TABLE pets; --",
      '',
      ' ',
      '0',
      '-1',
      '1e3',
      'NaN',
      'Infinity',
      'null',
      'true',
      '[]',
      '{}',
      ...PROTOTYPE_KEYS,
    ),
    fc.string({ unit: 'binary', maxLength: 20 }),
    fc.string({ unit: fc.integer({ min: 0, max: 0x1f }).map((c) => String.fromCharCode(c)), maxLength: 8 }),
    fc.string({
      unit: fc.integer({ min: 0xd800, max: 0xdfff }).map((c) => String.fromCharCode(c)),
      minLength: 1,
      maxLength: 4,
    }),
    fc.integer({ min: 200, max: longest }).map((n) => 'x'.repeat(n)),
  );
/** In a body: past the body limit. */
const hostileString = hostile(BODY_LIMIT_BYTES + 1000);
/** In a URL: within what Node accepts in a request line (16 KiB of headers). */
const hostileUrlPart = hostile(1500);

/** Integers at and past every bound (int32, int64, IEEE doubles), and tokens that are not finite. */
const NUMBER_TOKENS = [
  '0',
  '-0',
  '1',
  '-1',
  '0.5',
  '1e0',
  '2147483647',
  '2147483648',
  '-2147483649',
  '4294967296',
  '9007199254740991',
  '9007199254740993',
  '9223372036854775807',
  '9223372036854775808',
  '-9223372036854775809',
  '123456789012345678901234567890',
  '1e308',
  '1.7976931348623157e308',
  '1e309',
  '1e999',
  '-1e999',
  '5e-324',
  '1e-400',
  'NaN',
  'Infinity',
  '-Infinity',
  '0x10',
  '01',
  '1.',
  '.5',
  '+1',
];
const hostileNumber: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(...NUMBER_TOKENS),
  fc.double().map((n) => (Number.isFinite(n) ? String(n) : '1e999')),
  fc.bigInt({ min: -(2n ** 80n), max: 2n ** 80n }).map(String),
);

const scalar: fc.Arbitrary<Value> = fc.oneof(
  { weight: 3, arbitrary: hostileString.map((value) => ({ kind: 'string' as const, value })) },
  { weight: 3, arbitrary: hostileNumber.map((token) => ({ kind: 'number' as const, token })) },
  {
    weight: 1,
    arbitrary: fc.constantFrom('true', 'false', 'null').map((token) => ({ kind: 'literal' as const, token })),
  },
);

/** Nesting around the depth limit, and as deep as the body limit allows (two bytes a level). */
const deepNesting: fc.Arbitrary<Value> = fc
  .oneof(
    fc.integer({ min: MAX_JSON_DEPTH - 2, max: MAX_JSON_DEPTH + 2 }),
    fc.integer({ min: 100, max: BODY_LIMIT_BYTES / 2 }),
  )
  .chain((depth) => scalar.map((inner) => ({ kind: 'nested' as const, depth, inner })));

function valueFor(keys: string[]): fc.Arbitrary<Value> {
  const key = fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom(...keys, ...PROTOTYPE_KEYS) },
    { weight: 1, arbitrary: hostileString },
  );
  return fc.letrec<{ value: Value }>((tie) => ({
    value: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      { weight: 6, arbitrary: scalar },
      { weight: 1, arbitrary: deepNesting },
      {
        weight: 1,
        arbitrary: fc.array(tie('value'), { maxLength: 3 }).map((items) => ({ kind: 'array' as const, items })),
      },
      {
        weight: 1,
        arbitrary: fc
          .array(fc.tuple(key, tie('value')), { maxLength: 4 })
          .map((entries) => ({ kind: 'object' as const, entries })),
      },
    ),
  })).value;
}

/** A body: an object with the operation's own field names (and prototype keys) set to hostile values, or anything. */
function bodyFor(fields: string[]): fc.Arbitrary<{ text: string; bytes?: Buffer }> {
  const field = fc.oneof(
    { weight: 5, arbitrary: fc.constantFrom(...fields, ...PROTOTYPE_KEYS) },
    { weight: 1, arbitrary: hostileString },
  );
  const value = valueFor(fields);
  const object = fc
    .array(fc.tuple(field, value), { minLength: 1, maxLength: 5 })
    .map((entries): Value => ({ kind: 'object', entries }));
  return fc.oneof({ weight: 6, arbitrary: object }, { weight: 1, arbitrary: value }).chain((v) =>
    fc.oneof(
      // As JSON.stringify writes lone surrogates (escaped), and as raw bytes that are not UTF-8 (WTF-8).
      { weight: 4, arbitrary: fc.constant({ text: write(v) }) },
      { weight: 1, arbitrary: fc.constant({ text: write(v), bytes: wtf8(unescapeSurrogates(write(v))) }) },
    ),
  );
}

/** `"\ud800"` as JSON.stringify writes it, back to the lone surrogate itself. */
function unescapeSurrogates(text: string): string {
  return text.replace(/\\u(d[89a-f][0-9a-f]{2})/gi, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
}

/** UTF-8, except that a lone surrogate is written as its own three bytes (which no UTF-8 decoder accepts). */
function wtf8(text: string): Buffer {
  const parts: Buffer[] = [];
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    const pair =
      code >= 0xd800 && code <= 0xdbff && i + 1 < text.length && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00;
    if (pair) {
      parts.push(Buffer.from(text.slice(i, i + 2), 'utf8'));
      i++;
    } else if (code >= 0xd800 && code <= 0xdfff) {
      parts.push(Buffer.from([0xe0 | (code >> 12), 0x80 | ((code >> 6) & 0x3f), 0x80 | (code & 0x3f)]));
    } else {
      parts.push(Buffer.from(text[i], 'utf8'));
    }
  }
  return Buffer.concat(parts);
}

/** Percent-encodes every byte that is not unreserved, lone surrogates included (as WTF-8). */
function encode(text: string): string {
  return [...wtf8(text)]
    .map((b) =>
      /[A-Za-z0-9\-._~]/.test(String.fromCharCode(b))
        ? String.fromCharCode(b)
        : `%${b.toString(16).padStart(2, '0').toUpperCase()}`,
    )
    .join('');
}

interface Operation {
  method: string;
  template: string;
  pathParams: string[];
  queryParams: string[];
  bodyFields: string[] | null;
  secured: boolean;
}

function operationsOf(document: Json): Operation[] {
  const schemas = (document['components']?.['schemas'] ?? {}) as Json;
  const resolve = (schema: Json | undefined): Json | undefined =>
    schema?.['$ref'] ? (schemas[String(schema['$ref']).split('/').pop() ?? ''] as Json) : schema;
  const operations: Operation[] = [];
  for (const [template, item] of Object.entries(document['paths'] as Record<string, Json>)) {
    for (const [method, operation] of Object.entries(item)) {
      if (!['get', 'post', 'put', 'patch', 'delete'].includes(method)) continue;
      const parameters = [...((item['parameters'] ?? []) as Json[]), ...((operation['parameters'] ?? []) as Json[])];
      const body = resolve(operation['requestBody']?.['content']?.['application/json']?.['schema']);
      const security = (operation['security'] ?? document['security'] ?? []) as Json[];
      operations.push({
        method: method.toUpperCase(),
        template,
        pathParams: parameters.filter((p) => p['in'] === 'path').map((p) => p['name']),
        queryParams: parameters.filter((p) => p['in'] === 'query').map((p) => p['name']),
        bodyFields: operation['requestBody'] ? Object.keys(body?.['properties'] ?? {}) : null,
        secured: security.some((requirement) => Object.keys(requirement).length > 0),
      });
    }
  }
  return operations;
}

describe('fuzzing every documented operation with hostile input (fast-check, HTTP, real PostgreSQL)', () => {
  let api: TestApp;
  let customer: string;
  let operations: Operation[];

  beforeAll(async () => {
    api = await TestApp.start();
    customer = (await api.customer('Fuzzer')).key;
    const document = (await fetch(`${api.baseUrl}/openapi.json`).then((r) => r.json())) as Json;
    operations = operationsOf(document);
  });
  afterAll(async () => {
    await api.close();
  });

  it('finds the operations in the served description', () => {
    expect(operations.length).toBeGreaterThan(20);
    expect(operations.filter((o) => o.bodyFields !== null).length).toBeGreaterThan(5);
    expect(operations.filter((o) => o.pathParams.length > 0).length).toBeGreaterThan(5);
  });

  const pathValue = fc.oneof(
    { weight: 2, arbitrary: hostileNumber },
    { weight: 3, arbitrary: hostileUrlPart.filter((s) => s.length > 0) },
  );
  const queryEntry = (names: string[]) =>
    fc.tuple(
      fc.oneof(
        { weight: 4, arbitrary: fc.constantFrom(...names, ...PROTOTYPE_KEYS) },
        { weight: 1, arbitrary: hostileUrlPart },
      ),
      fc.oneof(hostileNumber, hostileUrlPart),
    );

  /** The assertions every answer must meet, whatever was sent. */
  function expectSound(response: TestResponse, label: string): void {
    expect({ label, status: response.status < 500 }).toEqual({ label, status: true });
    expect(response.headers.get('x-request-id')).toBeTruthy();
    if (response.status >= 400) {
      expect(response.body).toEqual(
        expect.objectContaining({ status: response.status, code: expect.any(String), message: expect.any(String) }),
      );
    }
  }

  it(`answers every operation soundly (${RUNS_PER_OPERATION} runs each)`, async () => {
    for (const [index, operation] of operations.entries()) {
      const names = [...operation.queryParams, 'limit', 'offset', 'cursor', 'sort'];
      const request = fc.record({
        path: fc.tuple(...operation.pathParams.map(() => pathValue)),
        query: fc.array(queryEntry(names), { maxLength: 4 }),
        body: operation.bodyFields
          ? bodyFor(operation.bodyFields.length ? operation.bodyFields : ['name'])
          : fc.constant(null),
        key: fc.constantFrom<string | null>(operation.secured ? ADMIN_KEY : null, ADMIN_KEY, customer, null, 'garbage'),
      });
      await fc.assert(
        fc.asyncProperty(request, async ({ path, query, body, key }) => {
          let url = operation.template;
          operation.pathParams.forEach((name, i) => (url = url.replace(`{${name}}`, encode(path[i]))));
          if (query.length) url += '?' + query.map(([k, v]) => `${encode(k)}=${encode(v)}`).join('&');
          const label = `${operation.method} ${url.slice(0, 300)} body ${body?.text.slice(0, 300)}`;
          const response = await api.request(operation.method, url, {
            key,
            raw: body ? (body.bytes ?? body.text) : undefined,
            headers: body ? { 'content-type': 'application/json' } : {},
          });
          expectSound(response, label);
        }),
        { seed: SEED + index, numRuns: RUNS_PER_OPERATION, endOnFailure: true },
      );
    }
  }, 120_000);

  it('answers any method on a documented path soundly: the operation, 405 with Allow, or 204 to OPTIONS', async () => {
    const templates = [...new Set(operations.map((o) => o.template))];
    const request = fc.record({
      template: fc.constantFrom(...templates),
      method: fc.constantFrom('GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'),
      id: hostileNumber,
    });
    await fc.assert(
      fc.asyncProperty(request, async ({ template, method, id }) => {
        const url = template.replace(/\{[^}]+\}/g, encode(id));
        const withBody = { raw: '{}', headers: { 'content-type': 'application/json' } };
        const documented = operations.some((o) => o.template === template && o.method === method);
        const response =
          method === 'OPTIONS'
            ? await fetch(api.baseUrl + url, { method }).then(async (r) => ({
                status: r.status,
                headers: r.headers,
                body: undefined,
                text: await r.text(),
              }))
            : await api.request(method, url, {
                key: ADMIN_KEY,
                ...(['GET', 'DELETE'].includes(method) ? {} : withBody),
              });
        expectSound(response, `${method} ${url}`);
        if (method === 'OPTIONS') expect(response.status).toBe(204);
        if (!documented && method !== 'OPTIONS') expect({ url, status: response.status }).toEqual({ url, status: 405 });
        if (response.status === 405 || method === 'OPTIONS') {
          const allowed = (response.headers.get('allow') ?? '').split(', ');
          const expected = operations.filter((o) => o.template === template).map((o) => o.method);
          expect(allowed).toEqual(expect.arrayContaining([...expected, 'OPTIONS']));
        }
      }),
      { seed: SEED, numRuns: 4 * RUNS_PER_OPERATION, endOnFailure: true },
    );
  });

  // A URL whose percent-encoding is not UTF-8 (a lone surrogate) is malformed, a 400 wherever it points.
  it('answers a path no operation has with 404 in the Error shape, whatever the path and query hold', async () => {
    const wellFormed = hostileUrlPart.filter((s) => Buffer.from(s).toString() === s);
    const request = fc.record({
      prefix: fc.constantFrom('/nowhere', '/pets/1/nowhere', '/store', '/accounts/me/api-keys/1/x', '/'),
      segment: wellFormed,
      query: fc.array(fc.tuple(wellFormed, wellFormed), { maxLength: 3 }),
      method: fc.constantFrom('GET', 'POST', 'DELETE'),
    });
    await fc.assert(
      fc.asyncProperty(request, async ({ prefix, segment, query, method }) => {
        let url = `${prefix.replace(/\/$/, '')}/zz${encode(segment)}`;
        if (query.length) url += '?' + query.map(([k, v]) => `${encode(k)}=${encode(v)}`).join('&');
        const response = await api.request(method, url, { key: ADMIN_KEY });
        expectSound(response, `${method} ${url.slice(0, 300)}`);
        expect({ url: url.slice(0, 300), status: response.status }).toEqual({ url: url.slice(0, 300), status: 404 });
      }),
      { seed: SEED, numRuns: 4 * RUNS_PER_OPERATION, endOnFailure: true },
    );
  });

  // Large arrays and large or nested bodies that are not objects (issue 24, item 1): whatever their size, the
  // answer is a 4xx of a bounded size (a 64 KiB array once answered 2.7 MB), with at most 20 details.
  it('answers large arrays and large or nested non-object bodies with a small 4xx', async () => {
    const withBody = operations.filter((o) => o.bodyFields !== null);
    const element = fc.constantFrom('0', '"x"', 'null', '{}', '[]', '{"a":1}', '{"toString":1}', '[0,[0]]');
    const bigArray = fc.tuple(element, fc.integer({ min: 1000, max: BODY_LIMIT_BYTES / 2 })).map(
      ([item, bytes]) =>
        `[${Array(Math.max(1, Math.floor(bytes / (item.length + 1))))
          .fill(item)
          .join(',')}]`,
    );
    const manyKeys = fc
      .integer({ min: 500, max: 5000 })
      .map((n) => `{${Array.from({ length: n }, (_, i) => `"k${i}":[${i}]`).join(',')}}`);
    const body = fc.oneof(
      bigArray,
      // The operation's own fields holding a large array or a large object.
      fc
        .tuple(fc.constantFrom('name', 'items', 'url', 'events', 'quantity', 'message'), bigArray)
        .map(([field, array]) => `{"${field}":${array}}`),
      manyKeys,
      // Arrays of objects nested within the depth limit, and scalars at the top.
      fc.integer({ min: 2, max: MAX_JSON_DEPTH - 1 }).map((depth) => '[{"a":'.repeat(depth) + '0' + '}]'.repeat(depth)),
      fc.constantFrom('"' + 'x'.repeat(60_000) + '"', '1e999', 'true', 'null', '123456789012345678901234567890'),
    );
    const request = fc.record({ operation: fc.constantFrom(...withBody), body });
    await fc.assert(
      fc.asyncProperty(request, async ({ operation, body: text }) => {
        const url = operation.template.replace(/\{[^}]+\}/g, '1');
        const response = await api.request(operation.method, url, {
          key: ADMIN_KEY,
          raw: text,
          headers: { 'content-type': 'application/json' },
        });
        const label = `${operation.method} ${url} body ${text.slice(0, 80)}… (${text.length} chars)`;
        expectSound(response, label);
        expect({ label, status: response.status >= 400 && response.status < 500 }).toEqual({ label, status: true });
        expect({ label, bytes: response.text.length < 4096 }).toEqual({ label, bytes: true });
        expect((response.body?.details ?? []).length).toBeLessThanOrEqual(20);
      }),
      { seed: SEED, numRuns: 4 * RUNS_PER_OPERATION, endOnFailure: true },
    );
  }, 120_000);

  // Names that look like another name (issue 36, item 4): a plain name with an invisible letter, mark or symbol
  // somewhere in it, or with a letter of a script outside UTS #39's recommended set (Lisu, Canadian syllabics,
  // Tifinagh, NKo, Cherokee, Coptic, Runic, Ogham…). Every one is refused with a 4xx, for a category and a pet.
  it('refuses names holding invisible letters or letters of scripts outside the recommended set', async () => {
    const category = await api.post('/categories', { key: ADMIN_KEY, body: { name: 'Fuzzed names' } });
    expect(category.status).toBe(201);
    const invisible = fc.oneof(
      fc.constantFrom(0x3164, 0x115f, 0x1160, 0xffa0, 0x034f, 0x2800, 0x17b4, 0x17b5),
      fc.integer({ min: 0xfe00, max: 0xfe0f }), // variation selectors
      fc.integer({ min: 0xe0100, max: 0xe01ef }), // variation selectors supplement
      fc.integer({ min: 0x180b, max: 0x180f }), // Mongolian free variation selectors
    );
    const foreignLetter = fc.oneof(
      fc.integer({ min: 0xa4d0, max: 0xa4f7 }), // Lisu
      fc.integer({ min: 0x1401, max: 0x166c }), // Canadian syllabics
      fc.integer({ min: 0x2d30, max: 0x2d67 }), // Tifinagh
      fc.integer({ min: 0x07ca, max: 0x07ea }), // NKo
      fc.integer({ min: 0x13a0, max: 0x13f5 }), // Cherokee
      fc.integer({ min: 0x2c80, max: 0x2ce4 }), // Coptic
      fc.integer({ min: 0x16a0, max: 0x16ea }), // Runic
      fc.integer({ min: 0x1681, max: 0x169a }), // Ogham
    );
    const plain = fc.constantFrom('Dogs', 'Cats', 'Rex', 'Birds of prey', 'Tom 2');
    const name = fc.tuple(plain, fc.oneof(invisible, foreignLetter), fc.nat()).map(([base, code, at]) => {
      const chars = [...base];
      chars.splice(1 + (at % chars.length), 0, String.fromCodePoint(code)); // never first: trimming cannot help
      return chars.join('');
    });
    await fc.assert(
      fc.asyncProperty(name, async (value) => {
        const label = [...value].map((c) => (c.codePointAt(0) ?? 0).toString(16)).join(' ');
        for (const [path, body] of [
          ['/categories', { name: value }],
          ['/pets', { name: value, categoryId: category.body.id }],
        ] as const) {
          const response = await api.post(path, { key: ADMIN_KEY, body });
          expectSound(response, `POST ${path} ${label}`);
          expect({ path, label, status: response.status }).toEqual({ path, label, status: 400 });
          expect(response.body.code).toBe('validation_failed');
        }
      }),
      { seed: SEED, numRuns: 4 * RUNS_PER_OPERATION, endOnFailure: true },
    );
  });

  // IPv6 forms that embed an IPv4 address (issue 24): each form around a loopback, private or link-local IPv4
  // address, in hex groups; every one is refused as the address it carries, with the one message for all.
  it('refuses webhook URLs whose IPv6 address embeds a forbidden IPv4 address, in every form', async () => {
    const forbiddenV4 = fc.oneof(
      fc.tuple(fc.constant(127), fc.nat(255), fc.nat(255), fc.nat(255)),
      fc.tuple(fc.constant(10), fc.nat(255), fc.nat(255), fc.nat(255)),
      fc.tuple(fc.constant(192), fc.constant(168), fc.nat(255), fc.nat(255)),
      fc.tuple(fc.constant(169), fc.constant(254), fc.nat(255), fc.nat(255)),
    );
    const hex = (n: number) => n.toString(16);
    const groups = ([a, b, c, d]: number[]) => [hex((a << 8) | b), hex((c << 8) | d)];
    const invert = ([high, low]: string[]) => [hex(~parseInt(high, 16) & 0xffff), hex(~parseInt(low, 16) & 0xffff)];
    const form = fc.tuple(
      fc.constantFrom('compatible', 'mapped', 'translated', 'nat64', '6to4', 'teredo-server', 'teredo-client'),
      forbiddenV4,
      fc.nat(0xffff).map(hex),
    );
    await fc.assert(
      fc.asyncProperty(form, async ([kind, v4, free]) => {
        const [high, low] = groups(v4);
        const address = {
          compatible: `::${high}:${low}`,
          mapped: `::ffff:${high}:${low}`,
          translated: `::ffff:0:${high}:${low}`,
          nat64: `64:ff9b::${high}:${low}`,
          '6to4': `2002:${high}:${low}:${free}::1`,
          'teredo-server': `2001:0:${high}:${low}:${free}::1`,
          'teredo-client': `2001:0:808:808:${free}::${invert([high, low]).join(':')}`,
        }[kind];
        const url = `https://[${address}]:8443/hook`;
        const response = await api.post('/webhooks/endpoints', {
          key: customer,
          body: { url, events: ['order.placed'] },
        });
        expectSound(response, `POST /webhooks/endpoints ${url}`);
        expect({ url, status: response.status, code: response.body?.code }).toEqual({
          url,
          status: 400,
          code: 'invalid_webhook_url',
        });
      }),
      { seed: SEED, numRuns: 4 * RUNS_PER_OPERATION, endOnFailure: true },
    );
  });
});
