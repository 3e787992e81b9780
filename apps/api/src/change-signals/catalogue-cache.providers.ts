import { Inject, Injectable, Logger, OnApplicationShutdown, Optional, Provider } from '@nestjs/common';
import { PgCatalogueChanges, PgKeyRevocations, TransactionHost } from '@petstore/infrastructure';
import { Counter } from 'prom-client';
import { CatalogueCache, CatalogueTable, LocalRecentWriters } from '../common/conditional/catalogue-cache';
import { ConfigPart } from '../config/app-config';
import { configToken } from '../config/config.module';
import { RedisRecentWriters } from '../database/redis-recent-writers';
import { Metrics } from '../metrics/metrics';
import { ChangeSignalsSettings } from './change-signals.settings';

/** The tables of the catalogue. */
const CATALOGUE_TABLES: readonly CatalogueTable[] = ['categories', 'pets', 'stock'];
/** The tables of the catalogue whose changes this process announces itself (the others have triggers). */
const ANNOUNCED_AFTER_COMMIT: readonly CatalogueTable[] = ['stock'];

/**
 * After each commit that changed the catalogue (a held write on `stock`: an order, a cancellation, a stock level set;
 * a pet's or a category's write, reported with `TransactionHost.changed`): this instance's cache drops the answers
 * made of those tables at once, before the write is answered, so that the next read here, whoever sends it, sees the
 * change without waiting for the notice (the trigger's NOTIFY reaches this instance's listener a little later: a
 * read sent right after the answer could be served what the write replaced). The stock changes are also announced to
 * the other instances, coalesced (PgCatalogueChanges: at most one notice per 5 ms); those of `pets` and `categories`
 * are announced by their triggers. After the commit, not in the transaction: a notifying transaction would serialise
 * every order's commit (see the CatalogueChangeSignals migration).
 */
@Injectable()
export class CatalogueCommits {
  constructor(
    @Inject(TransactionHost) host: TransactionHost,
    @Inject(PgCatalogueChanges) changes: PgCatalogueChanges,
    @Inject(CatalogueCache) cache: CatalogueCache,
  ) {
    const logger = new Logger('CatalogueCache');
    changes.onAnnounceFailed = (error) =>
      logger.warn(`A stock change was not announced (other instances drop it within the maximum age): ${error}`);
    host.afterCommit((tables) => {
      const changed = CATALOGUE_TABLES.filter((table) => tables.has(table));
      if (!changed.length) return;
      cache.changed(changed);
      for (const table of changed) if (ANNOUNCED_AFTER_COMMIT.includes(table)) changes.announce(table);
    });
  }
}

/** Closes the shared store of writers when the application closes. */
@Injectable()
class RecentWritersCloser implements OnApplicationShutdown {
  constructor(@Inject(RedisRecentWriters) @Optional() private readonly writers?: RedisRecentWriters | null) {}

  onApplicationShutdown(): void {
    this.writers?.close();
  }
}

/** The cache's metrics (docs/operations.md, "Catalogue cache"), read from its counters when scraped. */
@Injectable()
class CatalogueCacheMetrics {
  constructor(
    @Inject(CatalogueCache) cache: CatalogueCache,
    @Inject(PgCatalogueChanges) changes: PgCatalogueChanges,
    @Optional() metrics?: Metrics,
  ) {
    if (!metrics || !cache.enabled) return;
    const { stats } = cache;
    const registers = [metrics.registry];
    const counter = (name: string, help: string, read: () => number) =>
      new Counter({
        name,
        help,
        registers,
        collect() {
          this.reset();
          this.inc(read());
        },
      });
    counter(
      'catalogue_cache_hits_total',
      'Catalogue reads answered from the cache (joined misses included).',
      () => stats.hits + stats.joined,
    );
    counter(
      'catalogue_cache_misses_total',
      'Catalogue reads the cache did not hold (asked the database).',
      () => stats.misses - stats.joined,
    );
    new Counter({
      name: 'catalogue_cache_bypasses_total',
      help:
        'Catalogue reads answered from the database without looking: untrusted (the change signals are late), ' +
        'writer (the account wrote within the maximum age), writers_unknown (Redis did not answer).',
      labelNames: ['reason'] as const,
      registers,
      collect() {
        this.reset();
        for (const [reason, count] of Object.entries(stats.bypasses)) if (reason !== 'off') this.inc({ reason }, count);
      },
    });
    new Counter({
      name: 'catalogue_cache_invalidations_total',
      help: 'Change notices received per table (each drops every answer made of the table).',
      labelNames: ['table'] as const,
      registers,
      collect() {
        this.reset();
        for (const [table, count] of Object.entries(stats.invalidations)) this.inc({ table }, count);
      },
    });
    counter(
      'catalogue_cache_evictions_total',
      'Answers dropped to stay within the entries and bytes bounds.',
      () => stats.evictions,
    );
    counter(
      'catalogue_cache_discarded_total',
      'Answers not kept: a change was heard while their query ran.',
      () => stats.discarded,
    );
    metrics.gauge('catalogue_cache_entries', 'Answers the catalogue cache holds.', () => cache.size.entries);
    metrics.gauge(
      'catalogue_cache_bytes',
      'Bytes the catalogue cache holds (as counted for its bound).',
      () => cache.size.bytes,
    );
    metrics.gauge(
      'catalogue_cache_staleness_bound_seconds',
      'The promised bound (CATALOGUE_CACHE_STALENESS_BOUND_MS): changes older than this are always heard of.',
      () => cache.settings.stalenessBoundMs / 1000,
    );
    metrics.gauge(
      'catalogue_cache_heard_age_seconds',
      'How old what the change listener last confirmed is (its heartbeat); above the bound, the cache is bypassed.',
      // Capped: Prometheus takes +Inf, but a graph of it does not (none heard yet, or the listener lost).
      () => Math.min(3600, changes.heardAgeMs / 1000),
    );
  }
}

/** The catalogue cache of this process (on only where it listens: the `http` role), its commits and its metrics. */
export function catalogueCacheProviders(): Provider[] {
  return [
    {
      provide: PgCatalogueChanges,
      useFactory: (revocations: PgKeyRevocations) => revocations.catalogueChanges,
      inject: [PgKeyRevocations],
    },
    {
      provide: RedisRecentWriters,
      useFactory: (auth: ConfigPart<'auth'>, settings: ConfigPart<'catalogueCache'>) =>
        auth.redisUrl ? new RedisRecentWriters(auth.redisUrl, auth.redisKeyPrefix, settings.maxAgeMs) : null,
      inject: [configToken('auth'), configToken('catalogueCache')],
    },
    {
      provide: CatalogueCache,
      useFactory: (
        settings: ConfigPart<'catalogueCache'>,
        { listen }: ChangeSignalsSettings,
        changes: PgCatalogueChanges,
        shared: RedisRecentWriters | null,
      ) => {
        const enabled = settings.mode === 'on' && listen;
        const cache = new CatalogueCache(
          { ...settings, enabled },
          changes,
          new LocalRecentWriters(settings.maxAgeMs, shared ?? undefined),
        );
        if (enabled) {
          changes.subscribe(cache);
          // A heartbeat every quarter of the bound: one late beat, or two, still leave the cache trusted.
          changes.watch(Math.max(1, Math.floor(settings.stalenessBoundMs / 4)));
        }
        return cache;
      },
      inject: [configToken('catalogueCache'), ChangeSignalsSettings, PgCatalogueChanges, RedisRecentWriters],
    },
    CatalogueCommits,
    RecentWritersCloser,
    CatalogueCacheMetrics,
  ];
}
