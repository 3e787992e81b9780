import { AsyncLocalStorage } from 'node:async_hooks';
import {
  AccountProps,
  ApiKeyProps,
  CategoryProps,
  StockProps,
  MessageProps,
  OrderProps,
  PetProps,
  WebhookEndpointProps,
} from '@petstore/domain';
import type { OutboxEvent } from '../../src/events/event.ports';
import type { WebhookDelivery } from '../../src/webhook/webhook.ports';
import type { IdempotencyRecord } from '../../src/idempotency/idempotency.store';
import { Clock, UnitOfWork } from '../../src/ports';

/** An order row: the domain's props (the time it was placed among them). */
export type OrderRow = OrderProps;

/** A message row: the domain's props, its place in the queue (`seq`) and its delivery attempts. */
export interface MessageRow extends MessageProps {
  seq: number;
  attempts: number;
  lastError: string | null;
}

/** A webhook endpoint row: the domain's props and its failing streak (recordHealth). */
export interface WebhookEndpointRow extends WebhookEndpointProps {
  failingSince: Date | null;
}

/** A job of the webhook queues: one event's fan-out, or one attempt of a delivery (at `at`, null = now). */
export type WebhookJob =
  | { queue: 'fan-out'; eventId: string }
  | { queue: 'delivery'; deliveryId: number; at: Date | null; due?: Date };

/** The rows of every table the fakes keep; copied whole at the start of a transaction. */
export interface InMemoryTables {
  categories: Map<number, CategoryProps>;
  pets: Map<number, PetProps>;
  stock: Map<number, StockProps>;
  orders: Map<number, OrderRow>;
  accounts: Map<number, AccountProps>;
  apiKeys: Map<number, ApiKeyProps>;
  messages: Map<string, MessageRow>;
  /** The delivery jobs queued (message ids, in order): committed or rolled back with the message. */
  deliveryJobs: string[];
  webhookEndpoints: Map<number, WebhookEndpointRow>;
  /** The outbox and event log: each event with its place in the log (`seq`, from a sequence). */
  webhookEvents: Map<string, OutboxEvent & { seq: number }>;
  webhookDeliveries: Map<number, WebhookDelivery>;
  /** Each account's outbound budget: the theoretical arrival time of its next fanned-out delivery. */
  webhookOutboundBudgets: Map<number, Date>;
  /** The webhook jobs queued, in order: committed or rolled back with what queued them. */
  webhookJobs: WebhookJob[];
  /** Idempotency records by owner and the key's hash (never the key as sent), with their expiry. */
  idempotencyKeys: Map<string, IdempotencyRow>;
}

/** An idempotency record as the fake keeps it: the record, whose it is, until when it counts. */
export interface IdempotencyRow {
  owner: number | null;
  record: IdempotencyRecord;
  expiresAt: Date;
}

const emptyTables = (): InMemoryTables => ({
  categories: new Map(),
  pets: new Map(),
  stock: new Map(),
  orders: new Map(),
  accounts: new Map(),
  apiKeys: new Map(),
  messages: new Map(),
  deliveryJobs: [],
  webhookEndpoints: new Map(),
  webhookEvents: new Map(),
  webhookDeliveries: new Map(),
  webhookOutboundBudgets: new Map(),
  webhookJobs: [],
  idempotencyKeys: new Map(),
});

/** Deep enough a copy: rows are flat records (a Date is copied as a new Date). */
function copyTables(tables: InMemoryTables): InMemoryTables {
  const copyRows = <K, V extends object>(rows: Map<K, V>) =>
    new Map([...rows].map(([key, row]) => [key, structuredClone(row)] as const));
  return {
    categories: copyRows(tables.categories),
    pets: copyRows(tables.pets),
    stock: copyRows(tables.stock),
    orders: copyRows(tables.orders),
    accounts: copyRows(tables.accounts),
    apiKeys: copyRows(tables.apiKeys),
    messages: copyRows(tables.messages),
    deliveryJobs: [...tables.deliveryJobs],
    webhookEndpoints: copyRows(tables.webhookEndpoints),
    webhookEvents: copyRows(tables.webhookEvents),
    webhookDeliveries: copyRows(tables.webhookDeliveries),
    webhookOutboundBudgets: new Map([...tables.webhookOutboundBudgets].map(([id, tat]) => [id, new Date(tat)])),
    webhookJobs: tables.webhookJobs.map((job) => ({ ...job })),
    idempotencyKeys: copyRows(tables.idempotencyKeys),
  };
}

/**
 * The version a row has once an UPDATE wrote `next` over `stored`, as the database's triggers count it (migration
 * ResourceVersions): one more when a field the API shows (`shown`) changed, else the same. Dates compare by time.
 */
export function versionAfter<T extends { version: number }>(stored: T, next: T, shown: ReadonlyArray<keyof T>): number {
  const same = (a: unknown, b: unknown) =>
    a instanceof Date && b instanceof Date ? a.getTime() === b.getTime() : Object.is(a, b);
  return shown.every((field) => same(stored[field], next[field])) ? stored.version : stored.version + 1;
}

/** A clock the test sets: `now()` returns the set time until it is moved. */
export class FixedClock extends Clock {
  constructor(private time = new Date('2026-01-15T10:00:00.000Z')) {
    super();
  }

  now(): Date {
    return new Date(this.time.getTime());
  }

  set(time: Date): void {
    this.time = new Date(time.getTime());
  }

  advanceMinutes(minutes: number): void {
    this.time = new Date(this.time.getTime() + minutes * 60_000);
  }
}

/**
 * The store behind every in-memory fake of one test: the tables, their id sequences, and the
 * transaction (`InMemoryUnitOfWork`). What PostgreSQL gives the SQL repositories, reduced to
 * what the use cases rely on:
 * - a transaction is all or nothing: a `run` that throws leaves the tables as they were before it;
 * - transactions run one at a time (the strictest row lock): so the fakes' `lock…` methods need
 *   do nothing but check that they run inside one, which is what PostgreSQL's `FOR UPDATE` needs;
 * - sequences are not rolled back (an id is never handed out twice), as in PostgreSQL.
 * Outside `run`, a call reads and writes at once (autocommit) and sees a running transaction's writes:
 * no isolation, which sequential tests do not need.
 * Hand-written rather than an in-memory SQL engine: the point is a store with no database at all.
 */
export class InMemoryDatabase {
  tables: InMemoryTables = emptyTables();
  private readonly sequences = new Map<string, number>();
  /** The running transaction: what it does once committed (PostgreSQL's NOTIFY, say). */
  private readonly transaction = new AsyncLocalStorage<{ afterCommit: Array<() => void> }>();
  /** The end of the last transaction queued: the next one starts after it. */
  private queue: Promise<unknown> = Promise.resolve();

  constructor(readonly clock: FixedClock = new FixedClock()) {}

  /** The next value of a sequence (1, 2, …), as `bigserial` gives. */
  nextId(sequence: keyof InMemoryTables | string): number {
    const next = (this.sequences.get(sequence) ?? 0) + 1;
    this.sequences.set(sequence, next);
    return next;
  }

  get inTransaction(): boolean {
    return this.transaction.getStore() !== undefined;
  }

  /** Runs `effect` when the running transaction commits (never if it rolls back); at once outside one. */
  afterCommit(effect: () => void): void {
    const transaction = this.transaction.getStore();
    if (transaction) transaction.afterCommit.push(effect);
    else effect();
  }

  /** What `SELECT … FOR UPDATE` requires: a transaction. */
  assertInTransaction(method: string): void {
    if (!this.inTransaction) throw new Error(`${method} needs a transaction (UnitOfWork.run).`);
  }

  /** Runs `work` as one transaction (a nested call joins the outer one). */
  run<T>(work: () => Promise<T>): Promise<T> {
    if (this.inTransaction) return work();
    const afterCommit: Array<() => void> = [];
    const result = this.queue.then(() =>
      this.transaction.run({ afterCommit }, async () => {
        const before = copyTables(this.tables);
        let result: T;
        try {
          result = await work();
        } catch (error) {
          this.tables = before;
          throw error;
        }
        for (const effect of afterCommit) effect();
        return result;
      }),
    );
    this.queue = result.catch(() => undefined);
    return result;
  }
}

export class InMemoryUnitOfWork extends UnitOfWork {
  constructor(private readonly db: InMemoryDatabase) {
    super();
  }

  run<T>(work: () => Promise<T>): Promise<T> {
    return this.db.run(work);
  }
}
