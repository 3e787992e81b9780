// The generated sections of README.md and docs/*.md: each stands between `<!-- <name>:start -->` and
// `<!-- <name>:end -->`, and only its generator writes it (`npm run docs`; the test tiers: tools/jest/tiers.mjs).
// apps/api/test/docs-generated.spec.ts fails while a section differs from what its generator would write.
// CommonJS, so that the .mjs tools, the TypeScript generator and the jest specs load it as it is.

const markers = (name) => ({ start: `<!-- ${name}:start -->`, end: `<!-- ${name}:end -->` });

/** The section `name` of `document`, its markers included; throws when the document has none. */
function sectionOf(document, name) {
  const { start, end } = markers(name);
  const from = document.indexOf(start);
  const to = document.indexOf(end, from);
  if (from === -1 || to === -1) throw new Error(`No section ${name} (${start} … ${end}) in the document.`);
  return document.slice(from, to + end.length);
}

/** `document` with the section `name` holding `body` (a line or more of Markdown) between its markers. */
function withSection(document, name, body) {
  return document.replace(sectionOf(document, name), () => section(name, body));
}

/** What `withSection` puts between the markers: for a comparison with `sectionOf`. */
function section(name, body) {
  const { start, end } = markers(name);
  return `${start}\n${body.trim()}\n${end}`;
}

/** Prose wrapped at `width` characters a line, as the hand-written docs are (a word longer than that stays whole). */
function wrap(text, width = 120) {
  const lines = [];
  let current = '';
  // A unit stays with its number (`46 s`, `75 %`).
  const tokens = text.split(/\s+/).filter(Boolean);
  const words = tokens.reduce((kept, token) => {
    if (kept.length && /^(s|ms|%|MB)[.,;:)]*$/.test(token)) kept[kept.length - 1] += ` ${token}`;
    else kept.push(token);
    return kept;
  }, []);
  for (const word of words) {
    if (current && current.length + 1 + word.length > width) {
      lines.push(current);
      current = word;
    } else {
      current = current ? `${current} ${word}` : word;
    }
  }
  return [...lines, current].join('\n');
}

module.exports = { sectionOf, withSection, section, wrap };
