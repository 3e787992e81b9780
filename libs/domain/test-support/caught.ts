/** The error `fn` throws, for assertions on its class, code and kind; fails when nothing is thrown. */
export function caught(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  throw new Error('expected a throw');
}
