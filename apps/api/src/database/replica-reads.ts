import { Logger } from '@nestjs/common';
import { ReadReplicas } from '@petstore/infrastructure';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { MergeRouteConfig } from '../common/http-kit/route-config';
import { AppConfig } from '../config/app-config';
import { RedisWritePositions } from './redis-write-positions';

/** The route config flag `ReadsFromReplica` sets. */
const REPLICA_READS = 'replicaReads';

/**
 * On a GET: its statements outside a transaction may read from a replica (DATABASE_REPLICA_URLS) that has replayed the
 * caller's own writes and is within DATABASE_REPLICA_MAX_LAG_MS of the primary. Only for reads whose answer may be that
 * stale for anyone else: the catalogue, inventory, orders, events, messages, webhook endpoints and deliveries. Not on
 * the account and its keys (authentication reads the primary: see `registerReplicaReads`), nor on health.
 */
export function ReadsFromReplica(): MethodDecorator {
  return MergeRouteConfig({ [REPLICA_READS]: true });
}

/** Who a request comes from, as the bearer strategy verified it (once per request; the guard reuses it). */
export type ReadAuthenticator = (request: FastifyRequest) => Promise<{ account: { id: number } | null }>;

/** The replicas of DATABASE_REPLICA_URLS, polling from the start; the write positions in Redis with REDIS_URL. */
export function openReadReplicas(
  primary: ConstructorParameters<typeof ReadReplicas>[0],
  primaryUrl: string,
  config: AppConfig,
) {
  const { database, auth } = config;
  const logger = new Logger('ReadReplicas');
  const replicas = new ReadReplicas(primary, {
    urls: [...database.replicaUrls],
    primaryUrl,
    maxLagMs: database.replicaMaxLagMs,
    limits: {
      max: 10,
      acquireTimeoutMs: Math.min(database.acquireTimeoutMs, 1000),
      statementTimeoutMs: database.statementTimeoutMs,
      idleInTransactionTimeoutMs: database.idleInTransactionTimeoutMs,
      queryTimeoutMs: database.queryTimeoutMs,
    },
    ...(auth.redisUrl
      ? {
          shared: new RedisWritePositions(auth.redisUrl, auth.redisKeyPrefix, 60_000 + 10 * database.replicaMaxLagMs),
        }
      : {}),
    logger: { log: (message) => logger.log(message), warn: (message) => logger.warn(message) },
  });
  replicas.start();
  return replicas;
}

/**
 * The two hooks of read routing, registered only when replicas are configured (without them nothing of this runs):
 *
 * - preHandler, on a `@ReadsFromReplica()` GET: the caller is authenticated first (its key looked up on the primary,
 *   outside any ReadScope: a revoked key must be refused within a second everywhere, and a replica may be up to the
 *   bound behind, so key lookups never read from a replica), then the route's handler runs inside the caller's
 *   ReadScope, where TransactionHost sends its statements outside a transaction to a replica that may serve them.
 * - onSend, on any other method answered 2xx by an authenticated account: the primary's WAL position after the write
 *   becomes the account's (ReadReplicas.recordWrite), before the answer leaves, so that no later read by it, on any
 *   instance, comes from a replica that has not replayed the write.
 */
export function registerReplicaReads(
  fastify: FastifyInstance,
  replicas: ReadReplicas,
  authenticate: ReadAuthenticator,
): void {
  const logger = new Logger('ReadReplicas');
  fastify.addHook('preHandler', (request, _reply, done) => {
    const config = request.routeOptions.config as { [REPLICA_READS]?: boolean } | undefined;
    if (!(request.method === 'GET' || request.method === 'HEAD') || !config?.[REPLICA_READS]) return done();
    authenticate(request)
      .then((outcome) => replicas.scopeFor(outcome.account?.id ?? null))
      .then(
        (scope) => replicas.run(scope, done),
        // The guard meets the same failure and answers for it.
        () => done(),
      );
  });
  fastify.addHook('onSend', (request, reply, payload, done) => {
    const account = (request as { user?: { id: number } }).user;
    const write = !(request.method === 'GET' || request.method === 'HEAD' || request.method === 'OPTIONS');
    if (!write || !account || reply.statusCode < 200 || reply.statusCode >= 300) return done(null, payload);
    replicas.recordWrite(account.id).then(
      () => done(null, payload),
      (error: Error) => {
        logger.warn(`The write position of account ${account.id} was not recorded: ${error.message}`);
        done(null, payload);
      },
    );
  });
}
