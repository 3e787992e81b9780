import { formatLsn, parseLsn, PrimaryPositions, servesReads } from './replica-lag';

describe('WAL positions', () => {
  it('reads and prints them as PostgreSQL does, ordered as numbers', () => {
    expect(parseLsn('16/B374D848')).toBe((0x16n << 32n) + 0xb374d848n);
    expect(formatLsn(parseLsn('16/B374D848'))).toBe('16/B374D848');
    expect(formatLsn(parseLsn('0/0'))).toBe('0/0');
    expect(parseLsn('1/0') > parseLsn('0/FFFFFFFF')).toBe(true);
    expect(() => parseLsn('nonsense')).toThrow('Not a WAL position');
  });
});

describe('PrimaryPositions: how stale a replica is', () => {
  it('is the time since the primary was last at or before the replayed position', () => {
    const primary = new PrimaryPositions(5000);
    primary.add({ at: 1000, lsn: 100n });
    primary.add({ at: 1200, lsn: 200n });
    primary.add({ at: 1400, lsn: 300n });
    expect(primary.stalenessOf(300n, 1500)).toBe(100);
    expect(primary.stalenessOf(250n, 1500)).toBe(300);
    expect(primary.stalenessOf(100n, 1500)).toBe(500);
  });

  it('calls a replica that replayed an idle primary current, however old its last transaction', () => {
    const primary = new PrimaryPositions(5000);
    for (let at = 0; at <= 60_000; at += 200) primary.add({ at, lsn: 500n });
    expect(primary.stalenessOf(500n, 60_100)).toBe(100);
  });

  it('is Infinity for a position older than what is kept, or before any sample', () => {
    const primary = new PrimaryPositions(1000);
    expect(primary.stalenessOf(1000n, 0)).toBe(Infinity);
    for (let at = 0; at <= 5000; at += 200) primary.add({ at, lsn: BigInt(at) });
    expect(primary.stalenessOf(100n, 5000)).toBe(Infinity);
    expect(primary.stalenessOf(4200n, 5000)).toBe(800);
  });

  it('ignores a sample that answered out of order, and keeps the newest as the latest', () => {
    const primary = new PrimaryPositions(5000);
    primary.add({ at: 1000, lsn: 100n });
    primary.add({ at: 900, lsn: 90n });
    primary.add({ at: 1100, lsn: 50n });
    expect(primary.latest()).toEqual({ at: 1000, lsn: 100n });
  });
});

describe('servesReads', () => {
  it('takes a replica out past the bound, and back only within half of it; never one that does not answer', () => {
    expect(servesReads({ inUse: true, answers: true, stalenessMs: 1000 }, 1000)).toBe(true);
    expect(servesReads({ inUse: true, answers: true, stalenessMs: 1001 }, 1000)).toBe(false);
    expect(servesReads({ inUse: false, answers: true, stalenessMs: 600 }, 1000)).toBe(false);
    expect(servesReads({ inUse: false, answers: true, stalenessMs: 500 }, 1000)).toBe(true);
    expect(servesReads({ inUse: true, answers: false, stalenessMs: 0 }, 1000)).toBe(false);
  });
});
