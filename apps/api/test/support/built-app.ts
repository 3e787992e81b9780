import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { createServer } from 'node:net';
import { join, resolve } from 'node:path';
import { OpenApiContract } from './openapi-contract';
import type { RequestOptions, TestResponse } from './test-app';

const ROOT = resolve(__dirname, '../../../..');
export const BUILT_MAIN = join(ROOT, 'dist/apps/api/main.js');
const SOURCES = ['apps/api/src', 'libs/domain/src', 'libs/application/src', 'libs/infrastructure/src'];

function newestFile(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestFile(path) : statSync(path).mtimeMs);
  }
  return newest;
}

/**
 * The built service (`dist/apps/api/main.js`), as production runs it. CI builds before the tests;
 * run alone, a missing build or one older than the sources is built here first (`nx build api`).
 */
export function ensureBuilt(): string {
  const built = statSync(BUILT_MAIN, { throwIfNoEntry: false })?.mtimeMs ?? 0;
  const sources = Math.max(...SOURCES.map((dir) => newestFile(join(ROOT, dir))));
  if (built < sources) {
    execFileSync('npx', ['nx', 'build', 'api'], {
      cwd: ROOT,
      env: { ...process.env, NX_DAEMON: 'false', NX_NO_CLOUD: 'true' },
      stdio: 'pipe',
    });
  }
  return BUILT_MAIN;
}

export function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolvePort(port));
    });
  });
}

const flagsByNode = new Map<string, string[]>();

/** The flags `npm start` gives `node` (tools/node-flags.mjs run by that binary): the app runs here as it runs there. */
function startFlags(node: string): string[] {
  let flags = flagsByNode.get(node);
  if (!flags) {
    const printed = execFileSync(node, [join(ROOT, 'tools/node-flags.mjs')], { encoding: 'utf8' });
    flags = printed.split(' ').filter(Boolean);
    flagsByNode.set(node, flags);
  }
  return flags;
}

/** Settings a developer's shell might hold that would change what the process does. */
const CLEARED = ['PORT', 'METRICS_PORT', 'OTEL_EXPORTER_OTLP_ENDPOINT', 'DATA_DIR', 'REDIS_URL', 'DATABASE_URL'];

/** One API process of the built app, on its own port, spoken to over HTTP (responses checked against its OpenAPI). */
export class ApiProcess {
  private output = '';
  private contract!: OpenApiContract;
  private exited: Promise<number | null>;

  private constructor(
    private readonly child: ChildProcess,
    readonly baseUrl: string,
  ) {
    child.stdout?.on('data', (chunk: Buffer) => (this.output += chunk.toString('utf8')));
    child.stderr?.on('data', (chunk: Buffer) => (this.output += chunk.toString('utf8')));
    this.exited = new Promise((resolveExit) => child.once('exit', (code) => resolveExit(code)));
  }

  /** `node`: the Node.js binary to run it with (default: the one running the tests). */
  static async start(env: Record<string, string>, options: { node?: string } = {}): Promise<ApiProcess> {
    const port = await freePort();
    const base = Object.fromEntries(Object.entries(process.env).filter(([name]) => !CLEARED.includes(name)));
    const node = options.node ?? process.execPath;
    const child = spawn(node, [...startFlags(node), BUILT_MAIN], {
      env: { ...base, HOST: '127.0.0.1', PORT: String(port), LOG_FORMAT: 'json', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const api = new ApiProcess(child, `http://127.0.0.1:${port}`);
    await api.ready();
    api.contract = OpenApiContract.of(await (await fetch(`${api.baseUrl}/openapi.json`)).text());
    return api;
  }

  private async ready(): Promise<void> {
    let exitCode: number | null | undefined;
    void this.exited.then((code) => (exitCode = code));
    const deadline = Date.now() + 60_000;
    while (Date.now() < deadline) {
      if (exitCode !== undefined)
        throw new Error(`the API process exited (${exitCode}) during start-up:\n${this.output}`);
      const status = await fetch(`${this.baseUrl}/health/ready`).then(
        (r) => r.status,
        () => 0,
      );
      if (status === 200) return;
      await new Promise((resolveWait) => setTimeout(resolveWait, 200));
    }
    this.child.kill('SIGKILL');
    throw new Error(`the API process was not ready within 60 s:\n${this.output}`);
  }

  async request<T = any>(method: string, path: string, options: RequestOptions = {}): Promise<TestResponse<T>> {
    const headers: Record<string, string> = { ...options.headers };
    if (options.key) headers['authorization'] = `Bearer ${options.key}`;
    if (options.body !== undefined) headers['content-type'] = 'application/json';
    const response = await fetch(this.baseUrl + path, {
      method,
      headers,
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
    });
    const text = await response.text();
    const json = response.headers.get('content-type')?.startsWith('application/json') && text;
    const body = json ? JSON.parse(text) : text || undefined;
    const contentType = response.headers.get('content-type');
    const problems = this.contract.check(method, path, response.status, contentType, body, response.headers);
    if (problems.length) throw new Error(`Response does not match the OpenAPI description:\n${problems.join('\n')}`);
    return { status: response.status, headers: response.headers, body, text };
  }

  /** SIGTERM, as an orchestrator stops it; SIGKILL if it has not exited 20 s later. Returns the exit code. */
  async stop(): Promise<number | null> {
    if (this.child.exitCode !== null) return this.child.exitCode;
    this.child.kill('SIGTERM');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 20_000);
    try {
      return await this.exited;
    } finally {
      clearTimeout(timer);
    }
  }

  get log(): string {
    return this.output;
  }
}
