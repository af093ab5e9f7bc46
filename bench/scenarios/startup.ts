/**
 * Bench scenario: how long `npm start` takes until GET /readyz answers 200, on the zero-setup
 * path (embedded PostgreSQL in a fresh SERVICE_DATA_DIR, no database configured):
 * - first start: initialises the PostgreSQL cluster, migrates, creates the default tenant;
 * - restart with unchanged sources: the same data dir, and prestart finds dist/ up to date.
 * Targets on the development machine (docs/operations.md#starting-the-service): first ≤ 20 s,
 * restart ≤ 5 s. Each run is stopped with SIGTERM to `npm start`'s own process id, which must exit
 * cleanly.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '..', '..', '..');
const READY_BOUND_MS = 180_000;

export interface StartupResult {
  first_start_s: number;
  restart_s: number;
  rebuilt_on_restart: boolean;
  stopped_cleanly: boolean;
  targets: { first_start_at_most_20s: boolean; restart_at_most_5s: boolean };
}

async function freePort(): Promise<number> {
  const s = http.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
  const { port } = s.address() as AddressInfo;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

async function readyStatus(port: number): Promise<number> {
  try {
    const r = await fetch(`http://127.0.0.1:${port}/readyz`, { signal: AbortSignal.timeout(2_000) });
    await r.arrayBuffer();
    return r.status;
  } catch {
    return 0;
  }
}

/** One `npm start` until /readyz is 200; then SIGTERM to npm's pid and wait for the exit. */
async function timedStart(dataDir: string): Promise<{ seconds: number; rebuilt: boolean; exitedCleanly: boolean }> {
  const port = await freePort();
  const started = Date.now();
  const proc = spawn('npm', ['start', '--silent'], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp', SERVICE_DATA_DIR: dataDir, SERVICE_PORT: String(port), SERVICE_HOST: '127.0.0.1', SERVICE_LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  proc.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) => proc.on('exit', (code, signal) => r({ code, signal })));
  let done = false;
  void exited.then(() => (done = true));
  while (!done && Date.now() - started < READY_BOUND_MS) {
    if ((await readyStatus(port)) === 200) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  const seconds = (Date.now() - started) / 1000;
  if (done || seconds * 1000 >= READY_BOUND_MS) {
    proc.kill('SIGKILL');
    throw new Error(`npm start did not become ready (stderr: ${stderr.slice(-2000)})`);
  }
  proc.kill('SIGTERM');
  const exit = await exited;
  return { seconds: Math.round(seconds * 10) / 10, rebuilt: stderr.includes('building'), exitedCleanly: exit.code === 0 };
}

/** Runs the scenario; `log` prints progress lines. */
export async function startupScenario(log: (msg: string) => void): Promise<StartupResult> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tenant-service-bench-startup-'));
  fs.chmodSync(dataDir, 0o755); // as root, embedded PostgreSQL runs as the postgres user
  try {
    log('startup: npm start on embedded PostgreSQL, first start (fresh data dir)');
    const first = await timedStart(dataDir);
    log(`  ready in ${first.seconds} s`);
    log('startup: restart with unchanged sources');
    const second = await timedStart(dataDir);
    log(`  ready in ${second.seconds} s${second.rebuilt ? ' (rebuilt!)' : ''}`);
    return {
      first_start_s: first.seconds,
      restart_s: second.seconds,
      rebuilt_on_restart: second.rebuilt,
      stopped_cleanly: first.exitedCleanly && second.exitedCleanly,
      targets: { first_start_at_most_20s: first.seconds <= 20, restart_at_most_5s: second.seconds <= 5 },
    };
  } finally {
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

// `node dist/bench/scenarios/startup.js` runs this scenario alone.
if (require.main === module) {
  startupScenario((m) => process.stdout.write(`${m}\n`)).then(
    (r) => process.stdout.write(`${JSON.stringify(r, null, 2)}\n`),
    (err: unknown) => {
      process.stderr.write(`startup scenario failed: ${String(err)}\n`);
      process.exit(1);
    },
  );
}
