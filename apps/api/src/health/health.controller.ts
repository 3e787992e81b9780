import { Controller, Get, Injectable, OnApplicationShutdown, Optional } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiProperty, ApiPropertyOptional, ApiSchema, ApiTags } from '@nestjs/swagger';
import Redis from 'ioredis';
import { TransactionHost } from '@petstore/infrastructure';
import { Public } from '../common/auth/auth.decorators';
import { ApiError } from '../common/errors/api-error';
import { ConfigPart } from '../config/app-config';
import { InjectConfig } from '../config/config.module';
import { Drain } from '../common/drain/drain.service';
import { RELEASE } from '../release/release';
import { Metrics } from '../metrics/metrics';
import { answersWithin, PROBE_TIMEOUT_MS } from '../metrics/probe';

@ApiSchema({ name: 'Health' })
class HealthDto {
  @ApiProperty({
    enum: ['ok', 'degraded'],
    description: '`degraded`: the process serves, but a dependency it can do without does not answer (`redis`).',
  })
  status: 'ok' | 'degraded';

  @ApiPropertyOptional({
    enum: ['up', 'down'],
    description:
      'Readiness only, when REDIS_URL is set: whether Redis answers. While it does not, rate limits count per ' +
      'process; the process stays ready.',
  })
  redis?: 'up' | 'down';
}

@ApiSchema({ name: 'Liveness', description: 'The process is up, and which release it runs.' })
class LivenessDto {
  @ApiProperty({ enum: ['ok'] })
  status: 'ok';

  @ApiProperty({
    example: '1.2.0-dev+0123456789ab',
    description:
      'The release (semantic version; CHANGELOG.md): `1.2.0` for a tagged release, `1.2.0-dev+<commit>` for a ' +
      'build between releases.',
  })
  version: string;

  @ApiProperty({
    example: '96828ad7a9c8d50e6a8bd372df28395ee2cc8633',
    description: 'The git commit the running build was made from, or `unknown`.',
  })
  commit: string;
}

/**
 * Redis, when REDIS_URL is set (the shared rate-limit counters): a connection of its own, for probes only. Redis is
 * not critical (rate limits count per process without it), so it shows in readiness's body and in the `redis_up` gauge,
 * never as a readiness failure: a load balancer must not take every replica out over it.
 */
@Injectable()
export class RedisProbe implements OnApplicationShutdown {
  private redis: Redis | null = null;

  constructor(
    @InjectConfig('auth') private readonly auth: ConfigPart<'auth'>,
    @Optional() metrics?: Metrics,
  ) {
    if (!this.configured || !metrics) return;
    metrics.gauge('redis_up', 'Whether the configured Redis (REDIS_URL) answers a PING within 2 s: 1 yes, 0 no.', () =>
      answersWithin(this.ping()).then((up) => (up ? 1 : 0)),
    );
  }

  get configured(): boolean {
    return this.auth.redisUrl !== null;
  }

  async ping(): Promise<void> {
    if (!this.auth.redisUrl) return;
    this.redis ??= new Redis(this.auth.redisUrl, {
      lazyConnect: true,
      enableOfflineQueue: true,
      maxRetriesPerRequest: 0,
      connectTimeout: PROBE_TIMEOUT_MS,
    }).on('error', () => undefined); // the failing ping reports it
    await this.redis.ping();
  }

  onApplicationShutdown(): void {
    this.redis?.disconnect();
  }
}

@ApiTags('health')
@Public()
@Controller('health')
export class HealthController {
  constructor(
    private readonly host: TransactionHost,
    private readonly drain: Drain,
    private readonly redis: RedisProbe,
  ) {}

  @Get('live')
  @ApiOperation({ operationId: 'live', summary: 'The process is up, and which release it runs' })
  @ApiOkResponse({ type: LivenessDto })
  live(): LivenessDto {
    return { status: 'ok', version: RELEASE.version, commit: RELEASE.commit };
  }

  @Get('ready')
  @ApiOperation({
    operationId: 'ready',
    summary: 'The process can serve: its PostgreSQL answers, and it is not shutting down',
    description:
      'Answers 503 as soon as the process starts shutting down, while the requests in flight finish, and while ' +
      'PostgreSQL does not answer. Redis (when configured) is reported, not required: without it the process ' +
      'serves (rate limits count per process), so the answer stays 200 with `status: degraded` and `redis: down`.',
  })
  @ApiOkResponse({ type: HealthDto })
  async ready(): Promise<HealthDto> {
    if (this.drain.isDraining) throw ApiError.shuttingDown('The service is shutting down.', 5);
    const database = answersWithin(this.host.query('SELECT 1'));
    const redis = this.redis.configured ? answersWithin(this.redis.ping()) : undefined;
    if (!(await database)) throw unavailable('The database is not reachable.');
    if (redis === undefined) return { status: 'ok' };
    return (await redis) ? { status: 'ok', redis: 'up' } : { status: 'degraded', redis: 'down' };
  }
}

function unavailable(message: string): ApiError {
  return ApiError.serviceUnavailable(message, 5);
}
