#!/usr/bin/env node
/**
 * Formats a generated file with the workspace's Prettier settings, then wraps its doc comments at 120 characters:
 * openapi-typescript copies each description into one `@description …` line, however long. The wrapping is
 * hand-written because neither the generator nor Prettier (which leaves comments as they are) has such an option.
 * Continuation lines keep the ` * ` prefix, so editors show the same text.
 * Usage: node tools/openapi/wrap-comments.mjs <file>
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import * as prettier from 'prettier';

const MAX = 120;

export function wrapComments(text) {
  return text
    .split('\n')
    .flatMap((line) => {
      // A one-line `/** … */` that is too long becomes a block, then wraps like the others.
      const single = /^(\s*)\/\*\* (.*) \*\/$/.exec(line);
      if (single && line.length > MAX) {
        const [, indent, body] = single;
        return [`${indent}/**`, ...wrapComments(`${indent} * ${body}`).split('\n'), `${indent} */`];
      }
      const match = /^(\s*\* )(.*)$/.exec(line);
      if (!match || line.length <= MAX) return [line];
      const [, prefix, body] = match;
      const lines = [];
      let current = '';
      for (const word of body.split(' ')) {
        if (current && prefix.length + current.length + 1 + word.length > MAX) {
          lines.push(prefix + current);
          current = word;
        } else current = current ? `${current} ${word}` : word;
      }
      lines.push(prefix + current);
      return lines;
    })
    .join('\n');
}

const file = process.argv[2];
if (file) {
  const options = {
    ...(await prettier.resolveConfig(
      fileURLToPath(new URL('../../libs/client/src/generated/schema.ts', import.meta.url)),
    )),
    filepath: file,
  };
  writeFileSync(file, wrapComments(await prettier.format(readFileSync(file, 'utf8'), options)));
}
