import 'reflect-metadata';
import { Controller, Get, Module, Post } from '@nestjs/common';
import { INTERCEPTORS_METADATA } from '@nestjs/common/constants';
import { NotIdempotent, ShowsSecret } from './idempotency.decorators';
import { IdempotencyInterceptor } from './idempotency.interceptor';
import { describeIdempotency } from './idempotency.openapi';
import { applyIdempotencyToPosts } from './idempotent-posts';

@Controller('things')
class ThingsController {
  @Post()
  create(): string {
    return 'created';
  }

  @Post(':id/poke')
  @NotIdempotent('a poke is harmless to repeat and answers nothing to keep')
  poke(): string {
    return 'poked';
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

const interceptorsOf = (handler: object): unknown[] => Reflect.getMetadata(INTERCEPTORS_METADATA, handler) ?? [];

describe('Idempotency-Key on every POST: the rule and its opt-out', () => {
  it('puts the interceptor on every POST of the modules (and those they import), once, and on nothing else', () => {
    applyIdempotencyToPosts([OuterModule]);
    applyIdempotencyToPosts([OuterModule, ThingsModule]); // a second app in the same process
    const { prototype } = ThingsController;
    expect(interceptorsOf(prototype.create)).toEqual([IdempotencyInterceptor]);
    expect(interceptorsOf(prototype.poke)).toEqual([]);
    expect(interceptorsOf(prototype.list)).toEqual([]);
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
