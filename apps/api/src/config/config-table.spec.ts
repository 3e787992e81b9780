import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { allSettings } from './app-config';
import { configurationTable, TABLE_END, TABLE_START, withConfigurationTable } from './config-table';

describe('the configuration table of docs/operations.md', () => {
  const document = readFileSync(join(__dirname, '../../../../docs/operations.md'), 'utf8');

  it('is the one generated from the schema (npm run docs)', () => {
    const start = document.indexOf(TABLE_START);
    const end = document.indexOf(TABLE_END) + TABLE_END.length;
    expect(start).toBeGreaterThanOrEqual(0);
    expect(document.slice(start, end)).toBe(configurationTable());
  });

  it('has one row per setting, each with its type, default and meaning', () => {
    const table = configurationTable();
    for (const { setting } of allSettings()) {
      const row = table.split('\n').find((line) => line.startsWith(`| \`${setting.variable}\` |`));
      expect(row).toContain(setting.kind.type);
      expect(row).toContain(setting.fallback === null ? '| unset |' : `| \`${setting.fallback}\` |`);
    }
    expect(table.match(/^\| `[A-Z_]+` \|/gm)).toHaveLength(allSettings().length);
  });

  it('replaces only what stands between the markers, and adds the section to a file without one', () => {
    const around = `# Operations\n\nBefore.\n\n${TABLE_START}\nold\n${TABLE_END}\n\nAfter.\n`;
    expect(withConfigurationTable(around)).toBe(`# Operations\n\nBefore.\n\n${configurationTable()}\n\nAfter.\n`);
    expect(withConfigurationTable('# Operations\n')).toBe(
      `# Operations\n\n## Configuration\n\n${configurationTable()}\n`,
    );
  });
});
