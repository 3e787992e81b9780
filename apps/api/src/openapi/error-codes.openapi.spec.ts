import type { OpenAPIObject } from '@nestjs/swagger';
import { describeErrorCodes } from './error-codes.openapi';

const ERROR = { $ref: '#/components/schemas/Error' };
const documentWith = (responses: Record<string, { description: string }>): OpenAPIObject =>
  ({
    openapi: '3.0.3',
    info: { title: 't', version: '1' },
    paths: {
      '/things': {
        post: {
          responses: Object.fromEntries(
            Object.entries(responses).map(([status, { description }]) => [
              status,
              { description, content: { 'application/json': { schema: ERROR } } },
            ]),
          ),
        },
      },
    },
    components: { schemas: { Error: { type: 'object', properties: { code: { type: 'string' } } } } },
  }) as OpenAPIObject;

const codesOf = (document: OpenAPIObject, status: string) =>
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  (document.paths['/things'].post?.responses[status] as any).content['application/json'].schema.allOf[1].properties.code
    .enum;

describe('describeErrorCodes', () => {
  it('narrows each error response to the codes its description names, or the one its status carries', () => {
    const document = describeErrorCodes(
      documentWith({
        '409': { description: 'Taken (`category_name_taken`), or a race (`conflict`); see `Retry-After`.' },
        '401': { description: 'No key (`unauthorized`).' },
        '500': { description: 'Oops.' },
        '201': { description: 'Created.' },
      }),
    );
    expect(codesOf(document, '409')).toEqual(['category_name_taken', 'conflict']);
    expect(codesOf(document, '401')).toEqual(['unauthorized']);
    expect(codesOf(document, '500')).toEqual(['internal_error']);
    expect(document.paths['/things'].post?.responses['201']).toEqual({
      description: 'Created.',
      content: { 'application/json': { schema: ERROR } },
    });
    expect(document.components?.schemas?.['ErrorCode']).toMatchObject({ type: 'string' });
  });

  it('fails the build for an error response of a many-code status that names none of them', () => {
    expect(() => describeErrorCodes(documentWith({ '409': { description: 'It conflicts.' } }))).toThrow(
      'POST /things 409: its description names none of the codes of 409',
    );
    expect(() => describeErrorCodes(documentWith({ '418': { description: 'A teapot (`teapot`).' } }))).toThrow(
      'none in ERROR_CODES',
    );
  });
});
