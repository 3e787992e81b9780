import Ajv, { ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';

type Json = Record<string, unknown>;
const CONTRACTS = new Map<string, OpenApiContract>();
/** The description itself and its viewer are served beside the API, not described in it. */
const DOCUMENTATION_PATHS = /^\/(openapi\.(json|yaml)|docs(\/.*)?)$/;
type Header = { required?: boolean; $ref?: string };
interface Operation {
  responses: Record<string, { content?: Record<string, { schema?: Json }>; headers?: Record<string, Header> }>;
}
/** The API's own response headers: each one a response carries must be declared for its operation and status. */
const API_HEADERS = [
  ...['x-request-id', 'cache-control', 'ratelimit', 'ratelimit-policy', 'retry-after', 'www-authenticate'],
  ...['idempotent-replayed', 'location', 'link', 'deprecation', 'sunset', 'etag'],
];

/**
 * Checks responses against the OpenAPI document the service serves: the operation
 * exists, the status is documented, and the JSON body matches its schema. Object
 * schemas are closed (no undocumented fields) so that nothing leaks unnoticed.
 */
export class OpenApiContract {
  /**
   * The contract of a served description, by its text: one per description and jest file, however many apps the file
   * starts (rate-limit.e2e starts 16). Building one (Ajv, the formats, the components) and compiling each response's
   * validator cost 20 to 100 ms of CPU per app start, and more under load; a check's answer depends on the
   * description alone.
   */
  static of(text: string): OpenApiContract {
    let contract = CONTRACTS.get(text);
    if (!contract) {
      contract = new OpenApiContract(JSON.parse(text) as Json);
      CONTRACTS.set(text, contract);
    }
    return contract;
  }

  private readonly ajv = new Ajv({ strict: false, allErrors: true });
  private readonly validators = new Map<string, ValidateFunction>();
  private readonly routes: Array<{ pattern: RegExp; template: string; item: Record<string, Operation> }>;

  constructor(readonly document: Json) {
    addFormats(this.ajv);
    this.ajv.addFormat('int64', { type: 'number', validate: (n: number) => Number.isInteger(n) });
    this.ajv.addFormat('int32', {
      type: 'number',
      validate: (n: number) => Number.isInteger(n) && Math.abs(n) < 2 ** 31,
    });
    const components = (document['components'] as Json | undefined)?.['schemas'] as Json | undefined;
    this.ajv.addSchema({ $id: 'openapi', components: { schemas: closeSchemas(rewriteRefs(components ?? {})) } });
    this.routes = Object.entries(document['paths'] as Record<string, Record<string, Operation>>).map(
      ([template, item]) => ({
        template,
        item,
        pattern: new RegExp(`^${template.replace(/\{[^}]+\}/g, '[^/]+')}$`),
      }),
    );
  }

  /** Returns a list of problems; empty when the response matches the description. */
  check(method: string, url: string, status: number, contentType: string | null, body: unknown, headers?: Headers) {
    const path = new URL(url, 'http://x').pathname;
    if (DOCUMENTATION_PATHS.test(path)) return [];
    const route = this.routes.find((r) => r.pattern.test(path) && r.item[method.toLowerCase()]);
    if (!route) {
      // Unknown routes (404) and another method on a known path (405): only the Error shape can be checked.
      const knownPath = this.routes.some((r) => r.pattern.test(path));
      if (status === 404 || (status === 405 && knownPath)) {
        return this.validate('openapi#/components/schemas/Error', body, `${method} ${path} ${status}`);
      }
      return [`${method} ${path} is not in the OpenAPI description`];
    }
    const operation = route.item[method.toLowerCase()];
    const response = operation.responses[String(status)];
    if (!response) return [`${method} ${route.template} answered ${status}, which the description does not list`];
    const label = `${method} ${route.template} ${status}`;
    const headerProblems = headers ? this.checkHeaders(label, response.headers ?? {}, headers) : [];
    if (headerProblems.length) return headerProblems;
    const plainText = response.content?.['text/plain'];
    if (plainText && !response.content?.['application/json']) {
      if (!contentType?.startsWith('text/plain'))
        return [`${method} ${route.template} ${status}: content-type ${contentType} is not text/plain`];
      return typeof body === 'string' && body !== '' ? [] : [`${method} ${route.template} ${status}: no text body`];
    }
    const schema = response.content?.['application/json']?.schema;
    if (!schema) {
      return body === undefined || body === ''
        ? []
        : [`${method} ${route.template} ${status} has a body the description does not declare`];
    }
    if (!contentType?.startsWith('application/json'))
      return [`${method} ${route.template} ${status}: content-type ${contentType} is not JSON`];
    const key = `${method} ${route.template} ${status}`;
    let validate = this.validators.get(key);
    if (!validate) {
      validate = this.ajv.compile(closeSchemas(rewriteRefs(schema)));
      this.validators.set(key, validate);
    }
    return validate(body)
      ? []
      : (validate.errors ?? []).map(
          (e) => `${key}: ${e.instancePath || '(body)'} ${e.message} ${JSON.stringify(e.params)}`,
        );
  }

  /**
   * Problems of a value against one component schema (closed, as responses are): the events the service sends
   * (webhook deliveries) are checked against their schemas this way.
   */
  checkSchema(name: string, value: unknown): string[] {
    return this.validate(`openapi#/components/schemas/${name}`, value, name);
  }

  /** Every API header sent is declared, and every header declared required is sent. */
  private checkHeaders(label: string, declared: Record<string, Header>, sent: Headers): string[] {
    const components = (this.document['components'] as Json | undefined)?.['headers'] as
      | Record<string, Header>
      | undefined;
    const required = new Map(
      Object.entries(declared).map(([name, header]) => {
        const resolved = header.$ref ? components?.[header.$ref.split('/').pop() ?? ''] : header;
        return [name.toLowerCase(), resolved?.required === true];
      }),
    );
    const problems = API_HEADERS.filter((name) => sent.has(name) && !required.has(name)).map(
      (name) => `${label} sent ${name}, which it does not declare`,
    );
    for (const [name, must] of required) if (must && !sent.has(name)) problems.push(`${label} did not send ${name}`);
    return problems;
  }

  private validate(ref: string, body: unknown, label: string): string[] {
    const validate = this.ajv.getSchema(ref);
    if (!validate) return [`no schema ${ref}`];
    return validate(body)
      ? []
      : (validate.errors ?? []).map((e) => `${label}: ${e.instancePath} ${e.message} ${JSON.stringify(e.params)}`);
  }
}

function rewriteRefs<T>(node: T): T {
  if (Array.isArray(node)) return node.map(rewriteRefs) as T;
  if (node && typeof node === 'object') {
    return Object.fromEntries(
      Object.entries(node).map(([k, v]) => [
        k,
        k === '$ref' && typeof v === 'string' ? v.replace(/^#\//, 'openapi#/') : rewriteRefs(v),
      ]),
    ) as T;
  }
  return node;
}

function closeSchemas<T>(node: T): T {
  if (Array.isArray(node)) return node.map(closeSchemas) as T;
  if (node && typeof node === 'object') {
    const copy = Object.fromEntries(
      Object.entries(node).map(([k, v]) => [
        k,
        // The members of an allOf describe one object together (an Error whose `code` one operation narrows):
        // closing each alone would refuse the others' fields. Their own nested objects are still closed.
        k === 'allOf' && Array.isArray(v) ? v.map(closeNested) : closeSchemas(v),
      ]),
    ) as Json;
    if (copy['properties'] && copy['additionalProperties'] === undefined && !copy['allOf'])
      copy['additionalProperties'] = false;
    return copy as T;
  }
  return node;
}

/** A member of an allOf: left open itself, its properties' schemas closed. */
function closeNested<T>(node: T): T {
  if (!node || typeof node !== 'object' || Array.isArray(node)) return closeSchemas(node);
  const copy = { ...(node as Json) };
  if (copy['properties'] && typeof copy['properties'] === 'object') {
    copy['properties'] = Object.fromEntries(
      Object.entries(copy['properties'] as Json).map(([name, schema]) => [name, closeSchemas(schema)]),
    );
  }
  return copy as T;
}
