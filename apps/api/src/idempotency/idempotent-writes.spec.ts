import 'reflect-metadata';
import { Body, Controller, Delete, Get, HttpCode, Module, Patch, Post, Put, Res } from '@nestjs/common';
import {
  HTTP_CODE_METADATA,
  METHOD_METADATA,
  PATH_METADATA,
  PROPERTY_DEPS_METADATA,
  RESPONSE_PASSTHROUGH_METADATA,
  ROUTE_ARGS_METADATA,
} from '@nestjs/common/constants';
import { RouteParamtypes } from '@nestjs/common/enums/route-paramtypes.enum';
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import { ApiOperation } from '@nestjs/swagger';
import { Test } from '@nestjs/testing';
import { CommandResult, IdempotentOutcome, IdempotentRequest, RunIdempotently } from '@petstore/application';
import { IsString } from 'class-validator';
import type { FastifyReply } from 'fastify';
import { GlobalExceptionFilter } from '../common/errors/global-exception.filter';
import { createValidationPipe } from '../common/validation/validation.pipe';
import { NotIdempotent, ShowsSecret } from './idempotency.decorators';
import { describeIdempotency } from './idempotency.openapi';
import { IDEMPOTENT_ORIGINAL, RUN_IDEMPOTENTLY } from './idempotent-handler';
import { applyIdempotencyToWrites } from './idempotent-writes';

class NewThingDto {
  @IsString()
  name!: string;
}

/** What each handler was called with (its arguments), in the order of the calls. */
const calls: unknown[][] = [];

@Controller('things')
class ThingsController {
  @Post()
  @HttpCode(201)
  @ApiOperation({ operationId: 'createThing' })
  create(@Body() body: NewThingDto, @Res({ passthrough: true }) reply: FastifyReply): { name: string } {
    // eslint-disable-next-line prefer-rest-params -- what Nest passed, extra arguments included
    calls.push([...arguments]);
    void reply.header('Location', `/things/${body.name}`);
    return { name: body.name };
  }

  @Post(':id/reveal')
  @ShowsSecret()
  reveal(): { secret: string } {
    // eslint-disable-next-line prefer-rest-params -- what Nest passed, extra arguments included
    calls.push([...arguments]);
    return { secret: 's3cret' };
  }

  @Post(':id/poke')
  @NotIdempotent('a poke is harmless to repeat and answers nothing to keep')
  poke(): string {
    return 'poked';
  }

  @Patch(':id')
  rename(): { renamed: boolean } {
    return { renamed: true };
  }

  @Delete(':id')
  @HttpCode(204)
  remove(): void {
    return undefined;
  }

  @Put(':id')
  replace(): { replaced: boolean } {
    return { replaced: true };
  }

  @Get()
  list(): string[] {
    return [];
  }
}

@Module({ controllers: [ThingsController] })
class ThingsModule {}

@Module({ imports: [ThingsModule] })
class OuterModule {}

/** A stand-in for the use case (its own tests and the e2e tests run the real one): records, runs the handler. */
class RecordingRunIdempotently {
  readonly requests: IdempotentRequest[] = [];
  async execute(request: IdempotentRequest, handle: () => Promise<CommandResult>): Promise<IdempotentOutcome> {
    this.requests.push(request);
    return { replayed: false, result: await handle() };
  }
}

async function appWith(runIdempotently: RecordingRunIdempotently): Promise<NestFastifyApplication> {
  const moduleRef = await Test.createTestingModule({
    controllers: [ThingsController],
    providers: [{ provide: RunIdempotently, useValue: runIdempotently }],
  }).compile();
  const app = moduleRef.createNestApplication<NestFastifyApplication>(new FastifyAdapter(), { logger: false });
  app.useGlobalPipes(createValidationPipe());
  app.useGlobalFilters(new GlobalExceptionFilter());
  await app.init();
  await app.getHttpAdapter().getInstance().ready();
  return app;
}

describe('Idempotency-Key on every POST, PATCH and DELETE: the rule and its opt-out', () => {
  const { prototype } = ThingsController;
  const original = prototype.create;
  const routeArgs = (name: string): Record<string, { index: number }> =>
    Reflect.getMetadata(ROUTE_ARGS_METADATA, ThingsController, name);

  beforeAll(() => {
    applyIdempotencyToWrites([OuterModule]);
    applyIdempotencyToWrites([OuterModule, ThingsModule]); // a second app in the same process
  });

  it('wraps every POST, PATCH and DELETE handler of the modules (and those they import), once, nothing else', () => {
    expect(prototype.create).not.toBe(original);
    expect((prototype.create as unknown as Record<symbol, unknown>)[IDEMPOTENT_ORIGINAL]).toBe(original);
    expect(IDEMPOTENT_ORIGINAL in prototype.reveal).toBe(true);
    expect(IDEMPOTENT_ORIGINAL in prototype.rename).toBe(true);
    expect(IDEMPOTENT_ORIGINAL in prototype.remove).toBe(true);
    expect(IDEMPOTENT_ORIGINAL in prototype.poke).toBe(false);
    expect(IDEMPOTENT_ORIGINAL in prototype.replace).toBe(false);
    expect(IDEMPOTENT_ORIGINAL in prototype.list).toBe(false);
    expect(prototype.create.name).toBe('create');
  });

  it('keeps the handler’s metadata: route, status code, OpenAPI', () => {
    const wrapped = prototype.create;
    expect(Reflect.getMetadata(METHOD_METADATA, wrapped)).toBe(Reflect.getMetadata(METHOD_METADATA, original));
    expect(Reflect.getMetadata(PATH_METADATA, wrapped)).toBe('/');
    expect(Reflect.getMetadata(HTTP_CODE_METADATA, wrapped)).toBe(201);
    expect(Reflect.getMetadata('swagger/apiOperation', wrapped)).toEqual(
      expect.objectContaining({ operationId: 'createThing' }),
    );
    expect(Reflect.getOwnMetadataKeys(wrapped).sort()).toEqual(Reflect.getOwnMetadataKeys(original).sort());
  });

  it('declares the request and the reply (passthrough) after the handler’s own parameters, once', () => {
    const declared = Object.entries(routeArgs('create')).map(([key, { index }]) => [key.split(':')[0], index]);
    expect(declared.sort((a, b) => Number(a[1]) - Number(b[1]))).toEqual([
      [`${RouteParamtypes.BODY}`, 0],
      [`${RouteParamtypes.RESPONSE}`, 1],
      [`${RouteParamtypes.REQUEST}`, 2],
      [`${RouteParamtypes.RESPONSE}`, 3],
    ]);
    expect(Reflect.getMetadata(RESPONSE_PASSTHROUGH_METADATA, ThingsController, 'create')).toBe(true);
    expect(Object.values(routeArgs('reveal')).map(({ index }) => index)).toEqual([0, 1]);
    expect(routeArgs('poke')).toBeUndefined();
    const injected: Array<{ key: unknown; type: unknown }> = Reflect.getMetadata(
      PROPERTY_DEPS_METADATA,
      ThingsController,
    );
    expect(injected).toEqual([{ key: RUN_IDEMPOTENTLY, type: RunIdempotently }]);
  });

  it('refuses at start-up a POST that sends its own response', () => {
    @Controller('raw')
    class RawController {
      @Post()
      send(@Res() reply: FastifyReply): void {
        void reply.send('sent');
      }
    }
    @Module({ controllers: [RawController] })
    class RawModule {}
    expect(() => applyIdempotencyToWrites([RawModule])).toThrow(/RawController\.send sends its own response/);
  });

  describe('in Nest (two applications in one process, Fastify, the validation pipe)', () => {
    const first = new RecordingRunIdempotently();
    const second = new RecordingRunIdempotently();
    let apps: NestFastifyApplication[];
    beforeAll(async () => {
      apps = [await appWith(first), await appWith(second)];
    });
    afterAll(async () => {
      for (const app of apps) await app.close();
    });
    beforeEach(() => (calls.length = 0));

    const post = (app: NestFastifyApplication, url: string, payload: unknown, key?: string) =>
      app.inject({ method: 'POST', url, payload: payload as object, headers: key ? { 'idempotency-key': key } : {} });

    it('without the header calls the handler with its own arguments only; Nest sends its result', async () => {
      const answer = await post(apps[0], '/things', { name: 'rex' });
      expect(answer.statusCode).toBe(201);
      expect(answer.json()).toEqual({ name: 'rex' });
      expect(answer.headers['location']).toBe('/things/rex');
      expect(calls).toEqual([[expect.any(NewThingDto), expect.objectContaining({ send: expect.any(Function) })]]);
      expect(first.requests).toEqual([]);
    });

    it('with the header runs it through that application’s RunIdempotently, after validation', async () => {
      const answer = await post(apps[1], '/things', { name: 'fido' }, 'key-1');
      expect(answer.statusCode).toBe(201);
      expect(answer.body).toBe('{"name":"fido"}');
      expect(answer.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(calls).toHaveLength(1);
      expect(calls[0]).toHaveLength(2);
      expect(second.requests).toEqual([
        { accountId: null, key: 'key-1', fingerprint: expect.stringMatching(/^[0-9a-f]{64}$/), sealResult: false },
      ]);
      expect(first.requests).toEqual([]);

      const invalid = await post(apps[1], '/things', { name: 7 }, 'key-2');
      expect({ status: invalid.statusCode, code: invalid.json().code }).toEqual({
        status: 400,
        code: 'validation_failed',
      });
      expect(second.requests).toHaveLength(1); // refused by the pipe before any idempotency work
      expect(calls).toHaveLength(1);
    });

    it('seals the result of a handler that shows a secret; refuses a key of the wrong length', async () => {
      expect((await post(apps[0], '/things/1/reveal', {}, 'key-3')).statusCode).toBe(201);
      expect(first.requests).toEqual([expect.objectContaining({ key: 'key-3', sealResult: true })]);
      expect(calls).toEqual([[]]);
      expect((await post(apps[0], '/things/1/reveal', {}, 'k'.repeat(256))).statusCode).toBe(400);
      expect(first.requests).toHaveLength(1);
    });
  });

  it('refuses an opt-out without a reason', () => {
    expect(() => NotIdempotent(' ')).toThrow('needs the reason');
  });

  it('describes the header and the 409/422 answers, added to the operation’s own, unless exempt', () => {
    const own = { description: 'Too many (`too_many_keys`).', content: {} };
    const operation = { responses: { '409': own } as Record<string, { description: string; content?: unknown }> };
    describeIdempotency(operation);
    expect(operation).toEqual({
      parameters: [expect.objectContaining({ name: 'Idempotency-Key', in: 'header', required: false })],
      responses: {
        '409': { description: expect.stringMatching(/`too_many_keys`.*\n\n.*`idempotency_key_in_use`/s), content: {} },
        '422': expect.objectContaining({ description: expect.stringContaining('`idempotency_key_reused`') }),
      },
    });
    expect(operation.responses['409'].description).not.toContain('idempotency_replay_withheld');

    const sealed = { 'x-shows-secret': true, responses: {} as Record<string, { description: string }> };
    describeIdempotency(sealed);
    expect(sealed.responses['409'].description).toContain('`idempotency_replay_withheld`');

    const exempt = { 'x-idempotency-exempt': 'a reason', responses: {} };
    describeIdempotency(exempt);
    expect(exempt).toEqual({ 'x-idempotency-exempt': 'a reason', responses: {} });
  });

  it('marks a handler that shows a secret in its metadata', () => {
    class Keys {
      @Post()
      @ShowsSecret()
      issue(): string {
        return 'psk_…';
      }
    }
    expect(Reflect.getMetadata('petstore:shows-secret', Keys.prototype.issue)).toBe(true);
  });
});
