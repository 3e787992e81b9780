import { DynamicModule, Global, Module } from '@nestjs/common';
import { AppConfig } from './app-config';

/** The process's configuration (loaded and frozen by main.ts or a test), for every module: process-wide. */
@Global()
@Module({})
export class ConfigModule {
  static forRoot(config: AppConfig): DynamicModule {
    return {
      module: ConfigModule,
      providers: [{ provide: AppConfig, useValue: config }],
      exports: [AppConfig],
    };
  }
}
