// Runs the app's TypeScript sources in Node without a build: ts-node (transpile only, with decorator metadata)
// and the workspace's `@petstore/*` paths, which tsconfig-paths resolves from the root tsconfig.
const { join } = require('node:path');
const root = join(__dirname, '../..');
process.env.TS_NODE_PROJECT ??= join(__dirname, 'tsconfig.json');
process.env.TS_NODE_TRANSPILE_ONLY ??= 'true';
require('ts-node/register');
require('tsconfig-paths').register({
  baseUrl: root,
  paths: require(join(root, 'tsconfig.base.json')).compilerOptions.paths,
});
