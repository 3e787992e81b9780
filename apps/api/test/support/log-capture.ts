import { Writable } from 'node:stream';
import { createRootLogger, RootLogger } from '../../src/common/logging/logging';

/** The process's JSON log, captured: a root logger at `info` whose lines are parsed into `lines` as written. */
export function capturedLog(): { lines: Array<Record<string, unknown>>; logger: RootLogger } {
  const lines: Array<Record<string, unknown>> = [];
  const capture = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n').filter(Boolean)) lines.push(JSON.parse(line));
      done();
    },
  });
  return { lines, logger: createRootLogger({ logLevel: 'info', logFormat: 'json' }, capture) };
}
