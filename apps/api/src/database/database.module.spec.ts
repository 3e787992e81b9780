import type { Provider } from '@nestjs/common';
import { ReadReplicas } from '@petstore/infrastructure';
import { loadConfig } from '../config/app-config';
import { DatabaseModule } from './database.module';

/** Whether the module would make a ReadReplicas (nothing is opened here: the providers are only listed). */
function hasReplicas(env: Record<string, string>, readReplicas: boolean): boolean {
  const module = DatabaseModule.forRoot('postgres://u@primary/db', loadConfig(env), { readReplicas });
  const provides = (provider: Provider) =>
    provider === ReadReplicas || (typeof provider === 'object' && provider.provide === ReadReplicas);
  return (module.providers ?? []).some(provides) || (module.exports ?? []).includes(ReadReplicas);
}

describe('DatabaseModule: read replicas', () => {
  const replicas = { DATABASE_URL: 'postgres://u@primary/db', DATABASE_REPLICA_URLS: 'postgres://u@replica/db' };

  it('has none without DATABASE_REPLICA_URLS, and none in a process that serves no HTTP', () => {
    expect(hasReplicas({ DATABASE_URL: 'postgres://u@primary/db' }, true)).toBe(false);
    expect(hasReplicas(replicas, false)).toBe(false);
  });

  it('has them, for TransactionHost and the pipeline, in a process that serves HTTP with replicas configured', () => {
    expect(hasReplicas(replicas, true)).toBe(true);
  });
});
