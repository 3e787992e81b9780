const nxPreset = require('@nx/jest/preset').default;

// Every project's tsconfig.spec.json sets `isolatedModules`, which makes ts-jest transpile each file alone instead
// of type-checking it with the whole program: one e2e file went from 106 s to 31 s on a cold cache. The types are
// still checked, once, by `npm run typecheck` (tools/typecheck.mjs type-checks every tsconfig.spec.json; CI runs it
// before the tests).
module.exports = { ...nxPreset };
