/** How long a probe of a dependency waits: readiness (apps/api/src/health) and the `db_up`/`redis_up` gauges. */
export const PROBE_TIMEOUT_MS = 2000;

/** Whether `check` settles without an error within `ms` (a probe's answer: a late one counts as none). */
export async function answersWithin(check: Promise<unknown>, ms = PROBE_TIMEOUT_MS): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error('timeout')), ms)));
  try {
    await Promise.race([check, timeout]);
    return true;
  } catch {
    return false;
  } finally {
    clearTimeout(timer);
  }
}
