import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * Runs one command in one database transaction. Repositories called inside `run`
 * take part in that transaction; a nested `run` joins the outer one.
 */
export abstract class UnitOfWork {
  abstract run<T>(work: () => Promise<T>): Promise<T>;
}

/**
 * The request a unit of work runs for, as its transport sees it. When the transport gives up on the request (its
 * handler timeout passed, or the shutdown deadline) it has already answered, so the work must not commit afterwards:
 * it sets `cutOff`, and the unit of work refuses to send anything more, its COMMIT included, and rolls back. If a
 * COMMIT is already on its way (`commitsInFlight`), nobody can know yet whether it will hold: the transport answers
 * that the outcome is unknown rather than "not done". Work outside any request (jobs, workers) has no scope.
 */
export class WorkScope {
  /**
   * The one AsyncLocalStorage of a request: the logger reads the request id from it too. One store, not one per
   * concern: on Node 22 each store with a value is copied onto every promise and resource the request creates.
   */
  private static readonly store = new AsyncLocalStorage<WorkScope>();

  /** `requestId`: the transport's id of the request (for the log lines written while it is served). */
  constructor(readonly requestId?: string) {}

  /** Why the work was cut off, raised by its next statement; null while it may go on. */
  cutOff: Error | null = null;
  /** COMMITs sent and not answered yet (0 or 1 for a request). */
  commitsInFlight = 0;

  /** The scope of the work running now, if any. */
  static current(): WorkScope | undefined {
    return WorkScope.store.getStore();
  }

  /** Runs `work` (and everything it starts) in `scope`. */
  static run<T>(scope: WorkScope, work: () => T): T {
    return WorkScope.store.run(scope, work);
  }
}
