const { NxAppWebpackPlugin } = require('@nx/webpack/app-plugin');
const { DefinePlugin } = require('webpack');
const { execFileSync } = require('child_process');
const { join } = require('path');

/**
 * The release the bundle is (apps/api/src/release/release.ts): the workspace's version and the commit it is built
 * from. PETSTORE_COMMIT wins where there is no .git (the image's build stage: `--build-arg PETSTORE_COMMIT=…`).
 */
function release() {
  const root = join(__dirname, '../..');
  const { version } = require(join(root, 'package.json'));
  let commit = process.env.PETSTORE_COMMIT || 'unknown';
  if (!process.env.PETSTORE_COMMIT) {
    try {
      commit = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: root, encoding: 'utf8', stdio: 'pipe' }).trim();
    } catch {
      // no git: `unknown`
    }
  }
  return { version, commit };
}

module.exports = {
  output: {
    path: join(__dirname, '../../dist/apps/api'),
    clean: true,
    ...(process.env.NODE_ENV !== 'production' && {
      devtoolModuleFilenameTemplate: '[absolute-resource-path]',
    }),
  },
  plugins: [
    new NxAppWebpackPlugin({
      target: 'node',
      compiler: 'tsc',
      main: './src/main.ts',
      tsConfig: './tsconfig.app.json',
      assets: ['./src/assets'],
      optimization: false,
      outputHashing: 'none',
      generatePackageJson: true,
      sourceMap: true,
    }),
    new DefinePlugin({ __PETSTORE_RELEASE__: JSON.stringify(release()) }),
  ],
};
