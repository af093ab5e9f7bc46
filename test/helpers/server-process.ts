/**
 * The real server process (`node dist/src/server.js`), for tests that need signals, restarts
 * and the zero-setup embedded database. `buildOnce()` compiles the project first when dist/ is
 * older than the sources (as `npm start` does), so the tests never run a stale dist/.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

export const ROOT = path.resolve(__dirname, '..', '..');
export const SERVER_ENTRY = path.join(ROOT, 'dist', 'src', 'server.js');

let built: Promise<void> | null = null;

/**
 * Compiles src/ into dist/ once per jest run: test files run in parallel workers, and two tsc
 * processes writing dist/ while a third spawns node on it would be a flaky test. The first
 * worker takes a lock directory and builds; the others wait for its "built" marker.
 * Fails the test when the build fails.
 */
export function buildOnce(): Promise<void> {
  built ??= (async () => {
    const runId = process.env.TEST_DATABASE_NAME ?? String(process.ppid);
    const lock = path.join(os.tmpdir(), `tenant-service-build-${runId}.lock`);
    const done = path.join(os.tmpdir(), `tenant-service-build-${runId}.done`);
    for (let waited = 0; ; waited += 200) {
      if (fs.existsSync(done)) return;
      try {
        fs.mkdirSync(lock);
        break; // ours: build below
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      }
      if (waited > 180_000) throw new Error(`gave up waiting for another worker's build (${lock})`);
      await new Promise((r) => setTimeout(r, 200));
    }
    try {
      await compile();
      fs.writeFileSync(done, new Date().toISOString());
    } finally {
      fs.rmSync(lock, { recursive: true, force: true });
    }
  })();
  return built;
}

async function compile(): Promise<void> {
  try {
    // What `npm start` does first: tsc when a source is newer than the last build (a fresh
    // `npm ci` has built already), then the stamp (scripts/build-if-stale.mjs).
    await promisify(execFile)(process.execPath, [path.join(ROOT, 'scripts', 'build-if-stale.mjs')], {
      cwd: ROOT,
      maxBuffer: 16 * 1024 * 1024,
    });
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string };
    throw new Error(`npm run build failed:\n${e.stdout ?? ''}${e.stderr ?? ''}`);
  }
  if (!fs.existsSync(SERVER_ENTRY)) throw new Error(`${SERVER_ENTRY} missing after the build`);
}

export interface ServerProcess {
  readonly proc: ChildProcess;
  readonly baseUrl: string;
  /** Parsed JSON log lines written to stdout so far. */
  readonly logs: Array<Record<string, unknown>>;
  /** Raw stderr output. */
  stderr(): string;
  /** Resolves with the exit code (null when killed by a signal) and the signal. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Resolves with the first log line matching `pred`; rejects if the process exits first. */
  waitForLog(pred: (line: Record<string, unknown>) => boolean): Promise<Record<string, unknown>>;
}

/**
 * Starts the compiled server with exactly `env` (plus PATH and HOME); nothing of the test
 * process's SERVICE_* variables leaks in. `command` replaces `node dist/src/server.js` (e.g. `npm start`),
 * run in `command.cwd` (default: this checkout).
 */
export function startServerProcess(
  port: number,
  env: Record<string, string>,
  command: { file: string; args: string[]; cwd?: string } = { file: process.execPath, args: [SERVER_ENTRY] },
): ServerProcess {
  const proc = spawn(command.file, command.args, {
    cwd: command.cwd ?? ROOT,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp', SERVICE_PORT: String(port), SERVICE_HOST: '127.0.0.1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const logs: Array<Record<string, unknown>> = [];
  const waiters: Array<{ pred: (l: Record<string, unknown>) => boolean; resolve: (l: Record<string, unknown>) => void }> = [];
  let err = '';
  let partial = '';
  proc.stdout!.on('data', (chunk: Buffer) => {
    partial += chunk.toString('utf8');
    const lines = partial.split('\n');
    partial = lines.pop() ?? '';
    for (const line of lines) {
      if (!line.trim()) continue;
      let parsed: Record<string, unknown>;
      try {
        parsed = JSON.parse(line) as Record<string, unknown>;
      } catch {
        parsed = { msg: line };
      }
      logs.push(parsed);
      for (const w of [...waiters]) {
        if (w.pred(parsed)) {
          waiters.splice(waiters.indexOf(w), 1);
          w.resolve(parsed);
        }
      }
    }
  });
  proc.stderr!.on('data', (chunk: Buffer) => {
    err += chunk.toString('utf8');
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    proc.on('exit', (code, signal) => resolve({ code, signal }));
  });
  return {
    proc,
    baseUrl: `http://127.0.0.1:${port}`,
    logs,
    stderr: () => err,
    exited,
    waitForLog(pred) {
      const found = logs.find(pred);
      if (found) return Promise.resolve(found);
      return new Promise((resolve, reject) => {
        waiters.push({ pred, resolve });
        void exited.then(({ code, signal }) => reject(new Error(`server exited (code ${code}, signal ${signal}) before the awaited log line; stderr: ${err}`)));
      });
    },
  };
}

/**
 * Polls GET /readyz until it answers 200 or `boundMs` passes (a bound against a hang, not a
 * timing assertion). Returns the last status seen (0 = no connection).
 */
export async function waitUntilReady(server: ServerProcess, boundMs: number): Promise<number> {
  const deadline = Date.now() + boundMs;
  let status = 0;
  let exited = false;
  void server.exited.then(() => (exited = true));
  while (Date.now() < deadline && !exited) {
    try {
      const r = await fetch(`${server.baseUrl}/readyz`, { signal: AbortSignal.timeout(5_000) });
      status = r.status;
      await r.arrayBuffer();
      if (status === 200) return status;
    } catch {
      status = 0;
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  return status;
}

/** Sends a signal to the server and waits for its exit. */
export async function stopServer(server: ServerProcess, signal: NodeJS.Signals = 'SIGTERM'): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  if (server.proc.exitCode === null && server.proc.signalCode === null) server.proc.kill(signal);
  return server.exited;
}

/** `npm start --silent` in `cwd` (default: this checkout), with the npm that runs the tests. */
export function npmStartCommand(cwd: string = ROOT): { file: string; args: string[]; cwd: string } {
  const cli = process.env.npm_execpath;
  if (cli && cli.endsWith('npm-cli.js') && fs.existsSync(cli)) return { file: process.execPath, args: [cli, 'start', '--silent'], cwd };
  return { file: 'npm', args: ['start', '--silent'], cwd };
}

/** Process ids whose parent is `pid` (from /proc; Linux only, like the rest of the suite). */
export function childPids(pid: number): number[] {
  const out: number[] = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      // pid (comm) state ppid …; comm may contain spaces and parentheses: split after the last ')'.
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === pid) out.push(Number(entry));
    } catch {
      /* gone meanwhile */
    }
  }
  return out;
}

/** Process ids whose command line contains `text`. */
export function pidsWithArg(text: string): number[] {
  const out: number[] = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      if (fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0').some((a) => a.includes(text))) out.push(Number(entry));
    } catch {
      /* gone meanwhile */
    }
  }
  return out;
}
