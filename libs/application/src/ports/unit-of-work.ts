/**
 * Runs one command in one database transaction. Repositories called inside `run`
 * take part in that transaction; a nested `run` joins the outer one.
 */
export abstract class UnitOfWork {
  abstract run<T>(work: () => Promise<T>): Promise<T>;
}
