import { Controller, Get } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiProperty, ApiSchema, ApiTags } from '@nestjs/swagger';
import { DataSource } from 'typeorm';
import { Public } from '../common/auth/auth.decorators';
import { ApiError } from '../common/errors/api-error';

@ApiSchema({ name: 'Health' })
class HealthDto {
  @ApiProperty({ enum: ['ok'] })
  status: 'ok';
}

@ApiTags('health')
@Public()
@Controller('health')
export class HealthController {
  constructor(private readonly dataSource: DataSource) {}

  @Get('live')
  @ApiOperation({ operationId: 'live', summary: 'The process is up' })
  @ApiOkResponse({ type: HealthDto })
  live(): HealthDto {
    return { status: 'ok' };
  }

  @Get('ready')
  @ApiOperation({ operationId: 'ready', summary: 'The process can serve: its database answers' })
  @ApiOkResponse({ type: HealthDto })
  async ready(): Promise<HealthDto> {
    try {
      await Promise.race([
        this.dataSource.query('SELECT 1'),
        new Promise((_, reject) => setTimeout(() => reject(new Error('timeout')), 2000).unref()),
      ]);
    } catch {
      throw new ApiError(503, 'service_unavailable', 'The database is not reachable.', undefined, { 'Retry-After': '5' });
    }
    return { status: 'ok' };
  }
}
