import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';

/** The path of `name` on PATH, or null. */
export function onPath(name: string): string | null {
  for (const dir of (process.env['PATH'] ?? '').split(delimiter)) {
    if (!dir) continue;
    try {
      accessSync(join(dir, name), constants.X_OK);
      return join(dir, name);
    } catch {
      // not in this directory
    }
  }
  return null;
}
