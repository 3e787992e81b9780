const { NxAppWebpackPlugin } = require('@nx/webpack/app-plugin');
const { Compilation, DefinePlugin, sources } = require('webpack');
const { execFileSync } = require('child_process');
const { readFileSync } = require('fs');
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
  // releaseVersion (apps/api/src/release/release.ts): a pre-release build carries its commit as build metadata.
  const known = /^[0-9a-f]{12,40}$/.test(commit) && version.includes('-') && !version.includes('+');
  return { version: known ? `${version}+${commit.slice(0, 12)}` : version, commit };
}

/**
 * The pruned package.json and package-lock.json Nx writes beside the bundle (what the image installs) say version
 * 0.0.1: they get the release's version, so the bundle, the image and the workspace agree.
 */
class ReleaseVersionInPackageJson {
  constructor(version) {
    this.version = version;
  }

  apply(compiler) {
    compiler.hooks.thisCompilation.tap('ReleaseVersionInPackageJson', (compilation) => {
      compilation.hooks.processAssets.tap(
        { name: 'ReleaseVersionInPackageJson', stage: Compilation.PROCESS_ASSETS_STAGE_REPORT },
        () => {
          const update = (file, change) => {
            const asset = compilation.getAsset(file);
            if (!asset) return;
            const json = JSON.parse(asset.source.source().toString());
            change(json);
            compilation.updateAsset(file, new sources.RawSource(`${JSON.stringify(json, null, 2)}\n`));
          };
          update('package.json', (pkg) => (pkg.version = this.version));
          // Its lock file names the root package's version twice; npm keeps them equal to package.json's.
          update('package-lock.json', (lock) => {
            lock.version = this.version;
            if (lock.packages?.['']) lock.packages[''].version = this.version;
          });
        },
      );
    });
  }
}

/**
 * docs/api.md, whose errors table, entries and sections the service serves at /docs/errors
 * (apps/api/src/common/errors/error-docs.ts reads the file itself where there is no bundle).
 */
function apiGuide() {
  return readFileSync(join(__dirname, '../../docs/api.md'), 'utf8');
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
    new DefinePlugin({
      __PETSTORE_RELEASE__: JSON.stringify(release()),
      __PETSTORE_API_GUIDE__: JSON.stringify(apiGuide()),
    }),
    new ReleaseVersionInPackageJson(release().version),
  ],
};
