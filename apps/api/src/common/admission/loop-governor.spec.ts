import { LoopGovernor } from './loop-governor';

describe('LoopGovernor', () => {
  it('sets no cap while the loop keeps up, or while nothing is refused or queued however slow the loop', () => {
    const governor = new LoopGovernor(10);
    governor.onWindow(2, 1, true, 64, 64);
    expect(governor.cap).toBe(Infinity);
    governor.onWindow(500, 1, false, 64, 64);
    expect(governor.cap).toBe(Infinity);
  });

  it('cuts the cap to nine tenths of what is in flight for each slow window under pressure, down to one', () => {
    const governor = new LoopGovernor(10);
    governor.onWindow(11, 1, true, 64, 64);
    expect(governor.cap).toBe(57);
    governor.onWindow(11, 1, true, 57, 64);
    expect(governor.cap).toBe(51);
    // Fewer in flight than the cap (requests ended meanwhile): the cut starts from them.
    governor.onWindow(11, 1, true, 20, 64);
    expect(governor.cap).toBe(18);
    for (let i = 0; i < 100; i++) governor.onWindow(11, 1, true, governor.cap, 64);
    expect(governor.cap).toBe(1);
  });

  it('cuts by up to half in one window when the delay is far over its target', () => {
    const governor = new LoopGovernor(10);
    governor.onWindow(15, 1, true, 60, 64);
    expect(governor.cap).toBe(40);
    governor.onWindow(100, 1, true, 40, 64);
    expect(governor.cap).toBe(20);
  });

  it('holds the cap between half the target and the target, and gives a tenth back below half of it', () => {
    const governor = new LoopGovernor(10);
    governor.onWindow(11, 1, true, 40, 64);
    expect(governor.cap).toBe(36);
    governor.onWindow(8, 1, true, 36, 64);
    expect(governor.cap).toBe(36);
    governor.onWindow(4, 1, true, 36, 64);
    expect(governor.cap).toBe(41);
  });

  it('lifts the cap once it grows back to the gradient limit, sooner when nothing is refused or queued', () => {
    const governor = new LoopGovernor(10);
    governor.onWindow(11, 1, true, 64, 64);
    let windows = 0;
    while (governor.cap !== Infinity && windows < 100) {
      governor.onWindow(11, 1, false, 10, 64);
      windows++;
    }
    expect(governor.cap).toBe(Infinity);
    expect(windows).toBeLessThanOrEqual(3);
  });

  it('never cuts while the thread has room (utilisation under 90 %), and gives back below 85 %', () => {
    const governor = new LoopGovernor(10);
    governor.onWindow(11, 0.8, true, 64, 64);
    expect(governor.cap).toBe(Infinity);
    governor.onWindow(11, 0.95, true, 64, 64);
    expect(governor.cap).toBe(57);
    governor.onWindow(11, 0.88, true, 57, 64);
    expect(governor.cap).toBe(57);
    governor.onWindow(11, 0.8, true, 50, 60);
    // 57 + a tenth + 1 = 64, above the gradient's limit (60): the cap lifts.
    expect(governor.cap).toBe(Infinity);
  });

  it('does nothing with a target of 0 (off)', () => {
    const governor = new LoopGovernor(0);
    governor.onWindow(1_000, 1, true, 64, 64);
    expect(governor.cap).toBe(Infinity);
  });
});
