/**
 * A bench server (bench/server-worker.ts) in its own process, so that the CPU time it spends per
 * request can be read: on a shared machine req/s swing with everyone else's load, CPU time per
 * request much less.
 */
import { fork } from 'node:child_process';
import path from 'node:path';
import type { WorkerKind } from './types';

export interface ServerProcess {
  port: number;
  /** CPU time (user + system) the process has used so far, in microseconds. */
  cpuMicros(): Promise<number>;
  /** The process's resident set size now, in bytes. */
  rssBytes(): Promise<number>;
  stop(): Promise<void>;
}

export function startServerProcess(kind: WorkerKind, env: Record<string, string>): Promise<ServerProcess> {
  // BENCH_CPU_PROF=<dir>: each server process (service and references) writes a V8 CPU profile there when it stops
  // (open it in Chrome DevTools or speedscope), to see where its time per request goes.
  const profile = process.env.BENCH_CPU_PROF
    ? ['--cpu-prof', '--cpu-prof-dir', path.resolve(process.env.BENCH_CPU_PROF), '--cpu-prof-name', `${kind}.${process.pid}.${Date.now()}.cpuprofile`]
    : [];
  const child = fork(path.join(__dirname, '..', 'server-worker.js'), [], {
    execArgv: [...process.execArgv, ...profile],
    env: { ...process.env, BENCH_WORKER_INPUT: JSON.stringify({ kind, env, logFile: '/dev/null' }) },
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  let failure: Error | null = null;
  child.on('error', (err) => {
    failure = err;
  });
  const next = <T>(pick: (m: Record<string, unknown>) => T | undefined): Promise<T> =>
    new Promise((resolve, reject) => {
      if (failure) return reject(failure);
      const onMessage = (m: Record<string, unknown>) => {
        if (m.error) return reject(new Error(`${kind} server failed: ${String(m.error)}`));
        const v = pick(m);
        if (v === undefined) return;
        child.off('message', onMessage);
        resolve(v);
      };
      child.on('message', onMessage);
    });
  return next((m) => (typeof m.port === 'number' ? m.port : undefined)).then((port) => ({
    port,
    cpuMicros: () => {
      const answer = next((m) => (typeof m.cpu_us === 'number' ? m.cpu_us : undefined));
      child.send('cpu');
      return answer;
    },
    rssBytes: () => {
      const answer = next((m) => (typeof m.rss_bytes === 'number' ? m.rss_bytes : undefined));
      child.send('rss');
      return answer;
    },
    stop: () =>
      new Promise<void>((done) => {
        child.once('exit', () => done());
        child.send('stop');
      }),
  }));
}
