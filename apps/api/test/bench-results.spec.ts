import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = join(__dirname, '../../..');
const RESULTS = join(ROOT, 'bench/results');

/**
 * bench/results is not a lab notebook (issue 51): it keeps the reports the documentation cites and a summary, at most
 * 12 files; a run is written to tmp/bench/ and copied here only when a doc cites it.
 */
describe('bench/results', () => {
  const files = readdirSync(RESULTS);
  const docs = ['README.md', ...readdirSync(join(ROOT, 'docs')).map((name) => join('docs', name))]
    .filter((path) => path.endsWith('.md'))
    .map((path) => readFileSync(join(ROOT, path), 'utf8'))
    .join('\n');

  it('holds at most 12 files', () => {
    expect(files.length).toBeLessThanOrEqual(12);
  });

  it('holds only files README.md or docs/ cite, and a summary that lists each', () => {
    const summary = readFileSync(join(RESULTS, 'SUMMARY.md'), 'utf8');
    // A series is cited by its first run (`…-evening-run1.md` to `-run3.md`).
    const named = (text: string, file: string) => text.includes(file.replace(/-run[23]\.md$/, '-run1.md'));
    for (const file of files.filter((name) => name !== 'SUMMARY.md')) {
      expect({ file, cited: named(docs, file), inSummary: named(summary, file) }).toEqual({
        file,
        cited: true,
        inSummary: true,
      });
    }
  });
});
