/**
 * The configuration section of docs/operations.md, generated from the schema (`npm run docs`
 * writes it, config-table.spec.ts fails when the file and the schema differ).
 */
import { allSettings } from './app-config';

export const TABLE_START = '<!-- configuration:start -->';
export const TABLE_END = '<!-- configuration:end -->';

/** One table per concern, in the schema's order: variable, type and range, default, meaning. */
export function configurationTable(): string {
  const lines = [
    TABLE_START,
    '<!-- Generated from apps/api/src/config/schema.ts by `npm run docs`: edit the schema, not this. -->',
    '',
    'Every setting is an environment variable. An invalid value stops start-up with one line naming the',
    'variable; so does an empty one (`PORT=`): unset a variable to take its default. Only `apps/api/src/config/`',
    'reads these variables. A secret (marked "or `…_FILE`": every setting whose value may hold one) may be given',
    'instead as a file whose path its `_FILE` variable holds (`DATABASE_URL_FILE=/run/secrets/database_url`: Docker',
    'and Kubernetes secrets), its content read at start-up without surrounding white space; both set is refused.',
    'A `_FILE` variable the service would not read is refused too, rather than ignored: one of a setting that is not',
    'a secret (`PORT_FILE`), or one starting with the first word of a setting (`DATABASE_`, `ADMIN_`, `IDEMPOTENCY_`…;',
    "not `NODE_` nor `OTEL_`, shared with other software) that names no setting (`ADMIN_KEY_FILE`). Other software's",
    "(`SSL_CERT_FILE`) are left alone. A secret that looks like a template's placeholder (a word such as",
    '`change`, `replace`, `example`, `placeholder`, `your`, `here`, `secret`, `xxx`, or one character 8 times in a',
    'row) is refused.',
  ];
  let title = '';
  for (const entry of allSettings()) {
    if (entry.title !== title) {
      title = entry.title;
      lines.push('', `### ${title}`, '', '| Variable | Type | Default | Meaning |', '|---|---|---|---|');
    }
    const { variable, kind, fallback, doc } = entry.setting;
    const shown = fallback === null ? 'unset' : `\`${fallback}\``;
    const type = entry.setting.file ? `${kind.type}; or \`${variable}_FILE\`` : kind.type;
    lines.push(`| \`${variable}\` | ${cell(type)} | ${shown} | ${cell(doc)} |`);
  }
  lines.push('', TABLE_END);
  return lines.join('\n');
}

function cell(text: string): string {
  return text.replace(/\|/g, '\\|');
}

/** `document` with its configuration section replaced by the generated one (appended when it has none). */
export function withConfigurationTable(document: string): string {
  const start = document.indexOf(TABLE_START);
  const end = document.indexOf(TABLE_END);
  if (start === -1 || end < start) {
    const separator = document === '' || document.endsWith('\n\n') ? '' : document.endsWith('\n') ? '\n' : '\n\n';
    return `${document}${separator}## Configuration\n\n${configurationTable()}\n`;
  }
  return document.slice(0, start) + configurationTable() + document.slice(end + TABLE_END.length);
}
