import { DynamicModule, Global, Inject, Module, ValueProvider } from '@nestjs/common';
import { AppConfig, ConfigGroup } from './app-config';

/** The injection token of one concern's settings, typed where injected as ConfigPart<G>. */
export function configToken(group: ConfigGroup): string {
  return `config.${group}`;
}

/** Injects one concern's settings: `@InjectConfig('webhooks') webhooks: ConfigPart<'webhooks'>`. */
export function InjectConfig(group: ConfigGroup): ParameterDecorator {
  return Inject(configToken(group));
}

/**
 * The process's configuration (loaded and frozen by main.ts or a test): the whole, and each concern's part,
 * which is what a slice is handed. Global, as the configuration is process-wide.
 *
 * `processSettings`: what the assembly decided for this process from its roles (which queues it works, whether it
 * listens for the change signals), one value per token; each token is declared and typed by the module that reads
 * it (JobQueueModule.settings, ChangeSignalsModule.settings), which config/ does not know. Carried here so that those
 * modules stay static, imported by the modules that use them, and still read their process's settings.
 */
@Global()
@Module({})
export class ConfigModule {
  static forRoot(config: AppConfig, processSettings: ValueProvider[] = []): DynamicModule {
    const parts = (Object.keys(config) as ConfigGroup[]).map((group) => ({
      provide: configToken(group),
      useValue: config[group],
    }));
    return {
      module: ConfigModule,
      providers: [{ provide: AppConfig, useValue: config }, ...parts, ...processSettings],
      exports: [AppConfig, ...parts.map((part) => part.provide), ...processSettings.map((setting) => setting.provide)],
    };
  }
}
