import { WebhookOutboundSettings, WebhookSettings } from './webhook.ports';

describe('WebhookSettings.nextAttemptAt', () => {
  const at = new Date('2030-01-01T00:00:00.000Z');

  it('follows 5 s, 30 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h, then gives up (no jitter at random 0)', () => {
    const settings = new WebhookSettings(undefined, undefined, 0.1, undefined, () => 0);
    const waits = Array.from({ length: 9 }, (_, i) => settings.nextAttemptAt(i + 1, at)?.getTime() ?? null);
    const seconds = waits.map((time) => (time === null ? null : (time - at.getTime()) / 1000));
    expect(seconds).toEqual([5, 30, 300, 1800, 7200, 18_000, 36_000, 36_000, null]);
  });

  it('stretches each wait by up to the jitter fraction', () => {
    const settings = new WebhookSettings([1000], 10_000, 0.1, undefined, () => 0.999);
    const wait = (settings.nextAttemptAt(1, at) as Date).getTime() - at.getTime();
    expect(wait).toBeGreaterThan(1000);
    expect(wait).toBeLessThanOrEqual(1100);
  });
});

describe('WebhookOutboundSettings (the outbound budget arithmetic, issue 48)', () => {
  it("waits for nothing within a burst of a minute's worth, then one interval per delivery", () => {
    const twoAMinute = new WebhookOutboundSettings(2); // one every 30 s
    expect(twoAMinute.intervalMs).toBe(30_000);
    // The arrival time stands 90 s ahead after the third delivery of a burst: 90 − 30 − 60 = 0.
    expect(twoAMinute.delayMs(90_000, 1)).toBe(0);
    expect(twoAMinute.delayMs(120_000, 1)).toBe(30_000);
    // An account idle for a while starts again from now: its arrival time is no longer ahead.
    expect(twoAMinute.delayMs(30_000, 1)).toBe(0);
  });

  it('has no budget at 0', () => {
    expect(new WebhookOutboundSettings(0).intervalMs).toBeNull();
    expect(new WebhookOutboundSettings(0).delayMs(10_000_000, 5)).toBe(0);
  });
});
