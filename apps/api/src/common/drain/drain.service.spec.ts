import { Drain, shutdownShares } from './drain.service';

describe('Drain.timeLeft (what is left of SHUTDOWN_TIMEOUT_MS for the job queue)', () => {
  afterEach(() => jest.restoreAllMocks());

  it('is the whole timeout before the drain, and the rest of it once the drain started', async () => {
    const drain = new Drain();
    const now = jest.spyOn(Date, 'now').mockReturnValue(1_000_000);
    expect(drain.timeLeft(10_000)).toBe(10_000);
    expect(await drain.drain(10_000)).toBe(true);
    now.mockReturnValue(1_003_000);
    expect(drain.timeLeft(10_000)).toBe(7_000);
    now.mockReturnValue(1_020_000);
    expect(drain.timeLeft(10_000)).toBe(0);
  });
});

describe('shutdownShares (SHUTDOWN_TIMEOUT_MS shared between the drain and closing, the exit within it)', () => {
  it.each([
    [10_000, 8_000, 9_000],
    [2_000, 1_500, 1_750],
    [60_000, 58_000, 59_000],
    [0, 0, 0],
  ])('of %i ms: the drain %i ms, giving up on closing at %i ms', (timeoutMs, drainMs, deadlineMs) => {
    expect(shutdownShares(timeoutMs)).toEqual({ drainMs, deadlineMs });
  });
});
