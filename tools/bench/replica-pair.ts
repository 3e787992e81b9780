/**
 * A primary and an asynchronous hot standby on this machine, for the bench's replica scenario
 * (tools/bench/replica.mjs): the test fixture's two clusters (the embedded package's initdb, pg_ctl and postgres),
 * kept until Ctrl-C or SIGTERM.
 *
 *   node -r ./tools/openapi/register.cjs tools/bench/replica-pair.ts
 *   DATABASE_URL=<primary> BENCH_REPLICA_URL=<standby> npm run bench
 */
import { freePort, ReplicatedPostgres } from '../../apps/api/test/support/replicated-postgres';

async function main(): Promise<void> {
  const missing = ReplicatedPostgres.unavailable();
  if (missing) throw new Error(`No PostgreSQL binaries for replication: ${missing}`);
  const pair = await ReplicatedPostgres.create(
    'petstore_bench',
    { primary: await freePort(), standby: await freePort() },
    { synchronous: false },
  );
  const stop = () => void pair.stop().finally(() => process.exit(0));
  process.once('SIGINT', stop).once('SIGTERM', stop);
  try {
    await pair.start();
  } catch (error) {
    await pair.stop();
    throw error;
  }
  console.log(`DATABASE_URL=${pair.primary.url} BENCH_REPLICA_URL=${pair.standby.url}`);
  // The servers run on their own (pg_ctl): this process stays, to stop them on Ctrl-C or SIGTERM.
  setInterval(() => undefined, 60_000);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
