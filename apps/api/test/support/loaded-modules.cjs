// Preloaded (node --require) into a process under test: when it exits, writes to
// LOADED_MODULES_FILE the files it loaded from node_modules/@opentelemetry.
const { writeFileSync } = require('node:fs');

process.on('exit', () => {
  const loaded = Object.keys(require.cache).filter((file) => file.includes('node_modules/@opentelemetry/'));
  writeFileSync(process.env.LOADED_MODULES_FILE, JSON.stringify(loaded));
});
