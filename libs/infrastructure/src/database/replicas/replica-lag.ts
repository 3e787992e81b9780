/**
 * The pure part of read routing (no pool, no timer), so that it can be tested on made-up positions: WAL positions,
 * the primary's recent positions, and how stale a replica is.
 */

/** A WAL position as PostgreSQL prints it (`16/B374D848`), as a number of bytes. */
export function parseLsn(text: string): bigint {
  const [high, low] = text.split('/');
  if (low === undefined || !/^[0-9A-Fa-f]{1,8}$/.test(high) || !/^[0-9A-Fa-f]{1,8}$/.test(low)) {
    throw new Error(`Not a WAL position: ${text}`);
  }
  return (BigInt(`0x${high}`) << 32n) | BigInt(`0x${low}`);
}

/** A WAL position as PostgreSQL prints it. */
export function formatLsn(lsn: bigint): string {
  return `${(lsn >> 32n).toString(16).toUpperCase()}/${(lsn & 0xffffffffn).toString(16).toUpperCase()}`;
}

/** A position read from a server, and when the statement that read it was sent (performance.now()). */
export interface PositionSample {
  at: number;
  lsn: bigint;
}

/**
 * The primary's WAL positions of the last `keepMs`, as polled (`pg_current_wal_lsn()`). A replica that has replayed
 * up to a position the primary had reached at time t holds every transaction committed before t: so its staleness is
 * the time since the primary was last seen at or before its replay position. This needs no clock but this process's,
 * and an idle primary costs nothing (its position does not move, so a replica that replayed it is 0 behind, however
 * old its last replayed transaction: what `now() - pg_last_xact_replay_timestamp()` would wrongly call lag).
 */
export class PrimaryPositions {
  private readonly samples: PositionSample[] = [];

  constructor(private readonly keepMs: number) {}

  add(sample: PositionSample): void {
    const last = this.samples[this.samples.length - 1];
    // Polls may answer out of order; positions only grow.
    if (last && (sample.at < last.at || sample.lsn < last.lsn)) return;
    this.samples.push(sample);
    let old = 0;
    while (old < this.samples.length - 1 && this.samples[old].at < sample.at - this.keepMs) old++;
    if (old) this.samples.splice(0, old);
  }

  /** The newest sample: an upper bound of what any read that ended before its `at` saw on the primary. */
  latest(): PositionSample | undefined {
    return this.samples[this.samples.length - 1];
  }

  /**
   * How long before `now` a server that replayed up to `replayed` is (ms): the time since the primary's newest
   * position at or before it. Infinity when the primary was never seen that far back in the time kept: at least
   * `keepMs` behind, or not known yet.
   */
  stalenessOf(replayed: bigint, now: number): number {
    for (let i = this.samples.length - 1; i >= 0; i--) {
      if (this.samples[i].lsn <= replayed) return Math.max(0, now - this.samples[i].at);
    }
    return Infinity;
  }
}

/**
 * Whether a replica serves: out when it does not answer, is not a standby, or is more than `maxLagMs` behind; back in
 * once it answers and is within half the bound (so one hovering at the bound does not flap in and out).
 */
export function servesReads(state: { inUse: boolean; answers: boolean; stalenessMs: number }, maxLagMs: number) {
  if (!state.answers) return false;
  return state.inUse ? state.stalenessMs <= maxLagMs : state.stalenessMs <= maxLagMs / 2;
}
