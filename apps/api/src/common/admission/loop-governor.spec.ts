import { LoopGovernor } from './loop-governor';

describe('LoopGovernor', () => {
  it('sets no cap while the loop keeps up, or while nothing is refused or queued however slow the loop', () => {
    const governor = new LoopGovernor(10);
    governor.onWindow(2, 1, 1, 64, 64);
    expect(governor.cap).toBe(Infinity);
    governor.onWindow(500, 1, 0, 64, 64);
    expect(governor.cap).toBe(Infinity);
  });

  it('cuts the cap to nine tenths of what is in flight for each slow window under pressure, down to one', () => {
    const governor = new LoopGovernor(10);
    governor.onWindow(11, 1, 1, 64, 64);
    expect(governor.cap).toBe(57);
    governor.onWindow(11, 1, 1, 57, 64);
    expect(governor.cap).toBe(51);
    // Fewer in flight than the cap (requests ended meanwhile): the cut starts from them.
    governor.onWindow(11, 1, 1, 20, 64);
    expect(governor.cap).toBe(18);
    for (let i = 0; i < 100; i++) governor.onWindow(11, 1, 1, governor.cap, 64);
    expect(governor.cap).toBe(1);
  });

  it('cuts by up to half in one window when the delay is far over its target', () => {
    const governor = new LoopGovernor(10);
    governor.onWindow(15, 1, 1, 60, 64);
    expect(governor.cap).toBe(40);
    governor.onWindow(100, 1, 1, 40, 64);
    expect(governor.cap).toBe(20);
  });

  it('holds the cap between half the target and the target, and gives a tenth back below half of it', () => {
    const governor = new LoopGovernor(10);
    governor.onWindow(11, 1, 1, 40, 64);
    expect(governor.cap).toBe(36);
    governor.onWindow(8, 1, 1, 36, 64);
    expect(governor.cap).toBe(36);
    governor.onWindow(4, 1, 1, 36, 64);
    expect(governor.cap).toBe(41);
  });

  it('lifts the cap once it grows back to the gradient limit, sooner when nothing is refused or queued', () => {
    const governor = new LoopGovernor(10);
    governor.onWindow(11, 1, 1, 64, 64);
    let windows = 0;
    while (governor.cap !== Infinity && windows < 100) {
      governor.onWindow(11, 1, 0, 10, 64);
      windows++;
    }
    expect(governor.cap).toBe(Infinity);
    expect(windows).toBeLessThanOrEqual(3);
  });

  it('never cuts while the thread has room (utilisation under 90 %), and gives back below 85 %', () => {
    const governor = new LoopGovernor(10);
    governor.onWindow(11, 0.8, 1, 64, 64);
    expect(governor.cap).toBe(Infinity);
    governor.onWindow(11, 0.95, 1, 64, 64);
    expect(governor.cap).toBe(57);
    governor.onWindow(11, 0.88, 1, 57, 64);
    expect(governor.cap).toBe(57);
    governor.onWindow(11, 0.8, 1, 50, 60);
    // 57 + a tenth + 1 = 64, above the gradient's limit (60): the cap lifts.
    expect(governor.cap).toBe(Infinity);
  });

  it('does nothing with a target of 0 (off)', () => {
    const governor = new LoopGovernor(0);
    governor.onWindow(1_000, 1, 1, 64, 64);
    expect(governor.cap).toBe(Infinity);
  });

  describe("its own load only: a noisy neighbour's signals with the instance's own load low or high", () => {
    /**
     * A window as a core shared half and half with a busy loop shows it: the loop's delay far over its target (the
     * neighbour's slices), the loop busy nearly all the window (the wait for the core counted inside callbacks), the
     * process's own CPU half of it. `pressure`: the share of the window's arrivals refused or queued.
     */
    const noisy = (governor: LoopGovernor, pressure: number, inFlight: number, cpu = 0.5) =>
      governor.onWindow(40, 0.98, pressure, inFlight, 64, cpu);

    it('low own load (a few requests queued after a descheduling, its CPU half the busy time): no cap', () => {
      const governor = new LoopGovernor(10);
      // Ten seconds of windows: every one slow and busy, a few arrivals queued in some.
      for (let i = 0; i < 100; i++) noisy(governor, i % 3 === 0 ? 0.04 : 0, 12);
      expect(governor.cap).toBe(Infinity);
    });

    it('pressure from its own demand, but the busy time not its own CPU: no cap (the gradient and queue shed)', () => {
      const governor = new LoopGovernor(10);
      for (let i = 0; i < 100; i++) noisy(governor, 0.5, 64);
      expect(governor.cap).toBe(Infinity);
    });

    it('its own CPU, but only a small share of arrivals queued (a burst): no cap', () => {
      const governor = new LoopGovernor(10);
      for (let i = 0; i < 100; i++) noisy(governor, 0.05, 40, 1);
      expect(governor.cap).toBe(Infinity);
    });

    it('high own load (half its arrivals refused, the busy time its own CPU): the cap falls and holds', () => {
      const governor = new LoopGovernor(10);
      noisy(governor, 0.5, 64, 1);
      // The delay four times its target: half of what was in flight.
      expect(governor.cap).toBe(32);
      for (let i = 0; i < 20; i++) noisy(governor, 0.5, governor.cap, 1);
      expect(governor.cap).toBeLessThan(10);
    });

    it('a cap formed under its own load lifts once the noise alone is left (its own load gone)', () => {
      const governor = new LoopGovernor(10);
      for (let i = 0; i < 10; i++) noisy(governor, 0.5, Math.min(governor.cap, 64), 1);
      expect(governor.cap).toBeLessThan(64);
      let windows = 0;
      while (governor.cap !== Infinity && windows < 100) {
        noisy(governor, 0.02, 5);
        windows++;
      }
      expect(governor.cap).toBe(Infinity);
      expect(windows).toBeLessThan(40);
    });
  });
});
