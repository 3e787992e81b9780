import { Controller, Get, Header, Res } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiProduces, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { Auth } from '../common/auth/auth.decorators';
import { Metrics } from './metrics';

@ApiTags('metrics')
@Auth('admin')
@Controller('metrics')
export class MetricsController {
  constructor(private readonly metrics: Metrics) {}

  @Get()
  @Header('Cache-Control', 'no-store')
  @ApiProduces('text/plain')
  @ApiOperation({
    operationId: 'getMetrics',
    summary: 'Prometheus metrics of this instance (administrators)',
    description:
      'The Prometheus text exposition format: `http_request_duration_seconds` (labels `method`, `route` as the ' +
      'template, `status_code`), `rate_limit_rejections_total`, the process metrics (memory, CPU, event-loop ' +
      'lag, GC), the database pool (`db_pool_*`) and the message queue (`message_queue_*`). Each instance ' +
      'answers for itself. With `METRICS_PORT` set it is served there without a key, and not here.',
  })
  @ApiOkResponse({
    description: 'The metrics, as text.',
    content: {
      'text/plain': {
        schema: { type: 'string', maxLength: 10_000_000 },
        example:
          '# HELP http_request_duration_seconds Duration of HTTP requests in seconds\n' +
          '# TYPE http_request_duration_seconds histogram\n' +
          'http_request_duration_seconds_count{method="GET",route="/pets",status_code="200"} 42\n',
      },
    },
  })
  async get(@Res({ passthrough: true }) reply: FastifyReply): Promise<string> {
    void reply.type(this.metrics.contentType);
    return this.metrics.text();
  }
}
