/**
 * A bench server in its own process, so that the CPU time it spends per request can be read: on
 * a shared machine req/s swing with everyone else's load, CPU time per request much less.
 *
 * `service` is what users run: `npm start`'s command (`node dist/src/server.js`, built by the
 * bench) with only the environment a user sets (SERVICE_* plus PATH and HOME), its JSON logs on
 * standard output into a pipe that another process (`tail`) drains, as a log collector would;
 * ready when `/readyz` answers 200. Every other kind is bench/server-worker.ts, forked.
 * CPU time and RSS are read from /proc for both, the same way.
 */
import { execFileSync, fork, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { WorkerKind } from './types';

export interface ServerProcess {
  port: number;
  pid: number;
  /** CPU time (user + system) the process has used so far, in microseconds. */
  cpuMicros(): Promise<number>;
  /** The process's resident set size now, in bytes. */
  rssBytes(): Promise<number>;
  stop(): Promise<void>;
}

/** The service's entry point as `npm start` runs it (dist/bench/scenarios → dist/src/server.js). */
export const SERVICE_ENTRY = path.join(__dirname, '..', '..', 'src', 'server.js');

let clockTicks: number | null = null;
function ticksPerSecond(): number {
  if (clockTicks === null) {
    try {
      clockTicks = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      clockTicks = 100;
    }
  }
  return clockTicks;
}

/** utime + stime (µs) and RSS (bytes) of `pid`, from /proc/<pid>/stat (all its threads). */
/** A process's CPU time so far and resident set size, from /proc. */
export function procStat(pid: number): { cpuMicros: number; childrenCpuMicros: number; rssBytes: number } {
  const text = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command name (which may hold spaces): state is field 3, utime 14, stime 15,
  // cutime 16 and cstime 17 (the children it waited for), rss 24.
  const f = text.slice(text.lastIndexOf(')') + 2).split(' ');
  const micros = (ticks: number) => (ticks / ticksPerSecond()) * 1e6;
  return { cpuMicros: micros(Number(f[11]) + Number(f[12])), childrenCpuMicros: micros(Number(f[13]) + Number(f[14])), rssBytes: Number(f[21]) * 4096 };
}

async function sparePort(): Promise<number> {
  const s = net.createServer().listen(0, '127.0.0.1');
  await new Promise((r) => s.once('listening', r));
  const { port } = s.address() as AddressInfo;
  await new Promise((r) => s.close(r));
  return port;
}

function readyStatus(port: number): Promise<number> {
  return new Promise((resolve) => {
    const req = http.get({ host: '127.0.0.1', port, path: '/readyz', timeout: 2_000 }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', () => resolve(0));
    req.on('timeout', () => req.destroy());
  });
}

let profiles = 0;
function profileArgs(kind: string): string[] {
  // BENCH_CPU_PROF=<dir>: each server process (service and references) writes a V8 CPU profile there when it stops
  // (open it in Chrome DevTools or speedscope), to see where its time per request goes.
  return process.env.BENCH_CPU_PROF
    ? ['--cpu-prof', '--cpu-prof-dir', path.resolve(process.env.BENCH_CPU_PROF), '--cpu-prof-name', `${kind}.${process.pid}.${Date.now()}.${++profiles}.cpuprofile`]
    : [];
}

function waitExit(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((done) => child.once('exit', () => done()));
}

/** `node dist/src/server.js` as `npm start` runs it, with `env` (SERVICE_*) as its whole configuration. */
async function startService(env: Record<string, string>): Promise<ServerProcess> {
  const port = await sparePort();
  // The log collector: drains the pipe and keeps the last lines, shown if the service fails to start.
  const drain = spawn('tail', ['-c', '16384'], { stdio: ['pipe', 'pipe', 'ignore'] });
  let tailText = '';
  drain.stdout!.on('data', (c: Buffer) => (tailText += c.toString('utf8')));
  const child = spawn(process.execPath, [...profileArgs('service'), SERVICE_ENTRY], {
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp', ...env, SERVICE_PORT: String(port), SERVICE_HOST: '127.0.0.1' },
    stdio: ['ignore', drain.stdin!, 'pipe'],
  });
  // The service's end of the pipe is the child's now: the bench's copy would keep the collector waiting forever.
  drain.stdin!.destroy();
  let stderr = '';
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString('utf8').slice(0, 4096)));
  const exited = waitExit(child);
  const failure = async (why: string) => {
    child.kill('SIGKILL');
    await exited;
    await waitExit(drain);
    return new Error(`service ${why}: ${stderr.slice(-2000)}${tailText.slice(-4000)}`);
  };
  const started = Date.now();
  for (;;) {
    if (child.exitCode !== null) throw await failure(`exited with ${child.exitCode}`);
    if ((await readyStatus(port)) === 200) break;
    if (Date.now() - started > 60_000) throw await failure('not ready within 60 s');
    await new Promise((r) => setTimeout(r, 50));
  }
  const pid = child.pid!;
  return {
    port,
    pid,
    cpuMicros: () => Promise.resolve(procStat(pid).cpuMicros),
    rssBytes: () => Promise.resolve(procStat(pid).rssBytes),
    stop: async () => {
      child.kill('SIGTERM');
      await exited;
      await waitExit(drain);
      if (child.exitCode !== 0) throw new Error(`service exited with ${child.exitCode ?? child.signalCode} on SIGTERM: ${stderr.slice(-2000)}${tailText.slice(-4000)}`);
    },
  };
}

export function startServerProcess(kind: WorkerKind, env: Record<string, string>): Promise<ServerProcess> {
  if (kind === 'service') return startService(env);
  const child = fork(path.join(__dirname, '..', 'server-worker.js'), [], {
    execArgv: [...process.execArgv, ...profileArgs(kind)],
    env: { ...process.env, BENCH_WORKER_INPUT: JSON.stringify({ kind, env }) },
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  return new Promise<number>((resolve, reject) => {
    child.once('error', reject);
    const onMessage = (m: Record<string, unknown>) => {
      if (m.error) return reject(new Error(`${kind} server failed: ${String(m.error)}`));
      if (typeof m.port !== 'number') return;
      child.off('message', onMessage);
      resolve(m.port);
    };
    child.on('message', onMessage);
  }).then((port) => ({
    port,
    pid: child.pid!,
    cpuMicros: () => Promise.resolve(procStat(child.pid!).cpuMicros),
    rssBytes: () => Promise.resolve(procStat(child.pid!).rssBytes),
    stop: async () => {
      const exited = waitExit(child);
      child.send('stop');
      await exited;
    },
  }));
}
