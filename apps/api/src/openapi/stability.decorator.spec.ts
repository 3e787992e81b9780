import { Controller, Get, Post } from '@nestjs/common';
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import { DocumentBuilder, OpenAPIObject, SwaggerModule } from '@nestjs/swagger';
import { Test } from '@nestjs/testing';
import { Stability } from './stability.decorator';

@Stability('experimental')
@Controller('gadgets')
class GadgetsController {
  @Get()
  list(): string[] {
    return [];
  }

  @Post()
  @Stability('beta')
  create(): void {
    return undefined;
  }
}

@Controller('tools')
class ToolsController {
  @Get()
  list(): string[] {
    return [];
  }

  @Post()
  @Stability('beta')
  create(): void {
    return undefined;
  }
}

describe('@Stability', () => {
  let app: NestFastifyApplication;
  let document: OpenAPIObject;

  beforeAll(async () => {
    const module = await Test.createTestingModule({ controllers: [GadgetsController, ToolsController] }).compile();
    app = module.createNestApplication<NestFastifyApplication>(new FastifyAdapter(), { logger: false });
    document = SwaggerModule.createDocument(app, new DocumentBuilder().setOpenAPIVersion('3.0.3').build());
  });
  afterAll(() => app.close());

  const stabilityOf = (path: string, method: 'get' | 'post') =>
    (document.paths[path][method] as unknown as Record<string, unknown>)['x-stability'];

  it('marks one operation', () => {
    expect(stabilityOf('/tools', 'post')).toBe('beta');
  });

  it('leaves stable operations unmarked', () => {
    expect(document.paths['/tools'].get).not.toHaveProperty('x-stability');
  });

  it('marks every operation of a controller, an operation keeping its own level', () => {
    expect(stabilityOf('/gadgets', 'get')).toBe('experimental');
    expect(stabilityOf('/gadgets', 'post')).toBe('beta');
  });
});
