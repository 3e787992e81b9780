import type { DeliveryReport } from '@petstore/application';
import type { WakeUpSource } from './message-notifications';
import { DeliveryRun, MessageWorker } from './message-worker';

/** A DeliveryRun whose runs the test completes by hand. */
class ScriptedRun implements DeliveryRun {
  readonly started: number[] = [];
  private pending: Array<{ resolve: (report: DeliveryReport) => void; reject: (error: Error) => void }> = [];
  private released = false;

  execute(batchSize: number): Promise<DeliveryReport> {
    this.started.push(batchSize);
    if (this.released) return Promise.resolve({ claimed: 0, delivered: 0, retried: 0 });
    return new Promise((resolve, reject) => this.pending.push({ resolve, reject }));
  }

  /** Finishes the runs in progress and every later one at once (to let the worker stop). */
  releaseAll(): void {
    this.released = true;
    while (this.pending.length) this.finish();
  }

  get inProgress(): boolean {
    return this.pending.length > 0;
  }

  finish(report: Partial<DeliveryReport> = {}): void {
    const run = this.pending.shift();
    if (!run) throw new Error('no run in progress');
    run.resolve({ claimed: 0, delivered: 0, retried: 0, ...report });
  }

  fail(message: string): void {
    const run = this.pending.shift();
    if (!run) throw new Error('no run in progress');
    run.reject(new Error(message));
  }
}

class ManualWakeUps implements WakeUpSource {
  onWakeUp: (() => void) | null = null;
  stopped = false;
  start(onWakeUp: () => void): void {
    this.onWakeUp = onWakeUp;
  }
  async stop(): Promise<void> {
    this.stopped = true;
  }
}

const silent = { log: jest.fn(), warn: jest.fn(), error: jest.fn(), debug: jest.fn() };

async function until(condition: () => boolean, timeoutMs = 2_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not reached in time');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** Lets pending promise callbacks and zero-delay timers run. */
const settle = () => new Promise((resolve) => setTimeout(resolve, 20));

describe('MessageWorker', () => {
  let worker: MessageWorker | undefined;
  let runs: ScriptedRun[] = [];
  afterEach(async () => {
    const stopping = worker?.stop();
    for (const run of runs) run.releaseAll();
    await stopping;
    worker = undefined;
    runs = [];
    jest.clearAllMocks();
  });

  const make = (run: ScriptedRun, options = {}, wakeUps: WakeUpSource | null = null): MessageWorker => {
    runs.push(run);
    worker = new MessageWorker(run, { pollIntervalMs: 60_000, batchSize: 10, errorDelayMs: 60_000, ...options }, wakeUps, silent as never);
    return worker;
  };

  it('runs at once on start, then waits the poll interval when nothing was due', async () => {
    const run = new ScriptedRun();
    make(run, { pollIntervalMs: 100 }).start();
    await until(() => run.started.length === 1);
    expect(run.started).toEqual([10]);
    run.finish({ claimed: 0 });
    await settle();
    expect(run.started).toHaveLength(1); // asleep
    await until(() => run.started.length === 2);
  });

  it('runs again at once after a full batch (more may be due)', async () => {
    const run = new ScriptedRun();
    make(run).start();
    await until(() => run.started.length === 1);
    run.finish({ claimed: 10, delivered: 10 });
    await until(() => run.started.length === 2);
    run.finish({ claimed: 3, delivered: 3 });
    await settle();
    expect(run.started).toHaveLength(2); // a partial batch: back to polling (60 s here)
  });

  it('wakes up at once when told, and from its wake-up source', async () => {
    const run = new ScriptedRun();
    const wakeUps = new ManualWakeUps();
    const subject = make(run, {}, wakeUps);
    subject.start();
    await until(() => run.started.length === 1);
    run.finish();
    await settle();
    subject.wakeUp();
    await until(() => run.started.length === 2);
    run.finish();
    await settle();
    wakeUps.onWakeUp?.();
    await until(() => run.started.length === 3);
  });

  it('does not lose a wake-up that arrives during a run', async () => {
    const run = new ScriptedRun();
    const subject = make(run);
    subject.start();
    await until(() => run.started.length === 1);
    subject.wakeUp(); // a message was queued while the run was going on
    run.finish({ claimed: 1, delivered: 1 });
    await until(() => run.started.length === 2);
  });

  it('stop() waits for the run in progress to finish, and starts no other', async () => {
    const run = new ScriptedRun();
    const wakeUps = new ManualWakeUps();
    const subject = make(run, { pollIntervalMs: 1 }, wakeUps);
    subject.start();
    await until(() => run.inProgress);
    let stopped = false;
    const stopping = subject.stop().then(() => (stopped = true));
    await settle();
    expect(stopped).toBe(false); // the batch is still being delivered
    expect(wakeUps.stopped).toBe(true);
    run.finish({ claimed: 10, delivered: 10 }); // a full batch would normally run again at once
    await stopping;
    expect(stopped).toBe(true);
    expect(subject.isRunning).toBe(false);
    const runs = run.started.length;
    await settle();
    expect(run.started).toHaveLength(runs);
  });

  it('stop() cuts a sleep short', async () => {
    const run = new ScriptedRun();
    const subject = make(run);
    subject.start();
    await until(() => run.started.length === 1);
    run.finish();
    await settle();
    const started = Date.now();
    await subject.stop();
    expect(Date.now() - started).toBeLessThan(1_000);
  });

  it('keeps going after a failed run, waiting the error delay, and logs the outage once', async () => {
    const run = new ScriptedRun();
    make(run, { errorDelayMs: 30, maxErrorDelayMs: 30 }).start();
    await until(() => run.started.length === 1);
    run.fail('connection refused');
    await until(() => run.started.length === 2);
    run.fail('connection refused');
    await until(() => run.started.length === 3);
    expect(silent.error).toHaveBeenCalledTimes(1);
    run.finish();
    await settle();
    expect(silent.log).toHaveBeenCalledWith('Message delivery works again');
  });

  it('ignores wake-ups while waiting after a failure (the database is likely down)', async () => {
    const run = new ScriptedRun();
    const subject = make(run, { errorDelayMs: 60_000 });
    subject.start();
    await until(() => run.started.length === 1);
    run.fail('down');
    await settle();
    subject.wakeUp();
    await settle();
    expect(run.started).toHaveLength(1);
  });
});
