/**
 * Polls `probe` until `done` holds for its value, and returns that value; fails after `timeoutMs`.
 * Without `done`, `probe` is a condition polled until it is true. For effects that happen in the
 * background (a worker, a scheduled job, another instance): a test waits for the effect, never a set time.
 */
export async function eventually<T>(
  probe: () => Promise<T> | T,
  done: (value: T) => boolean = Boolean,
  timeoutMs = 15_000,
  intervalMs = 50,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (done(value)) return value;
    if (Date.now() > deadline) {
      throw new Error(`Not reached within ${timeoutMs} ms; last value: ${JSON.stringify(value)}`);
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
