/** The postmaster: started on a free port, stopped, and one left behind by a crash cleared. */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import type { Logger } from 'pino';
import type { Binaries } from './binaries';
import type { RunAs } from './run-as';
import { EmbeddedDatabaseError, NO_ROOT_HINT, errorText, exists, lastLine, sleep } from './support';

/** Postmasters this process is stopping (their exit is not an error). */
const stopping = new WeakSet<ChildProcess>();

/** Spawns the postmaster and resolves once it accepts connections. */
export async function startPostmaster(bin: Binaries, clusterDir: string, port: number, locale: string, runAs: RunAs | null, pgLog: Logger): Promise<ChildProcess> {
  const args = ['-D', clusterDir, '-p', String(port), '-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories='];
  // Its own process group: Ctrl-C at a terminal reaches the service, which drains its requests
  // and then stops PostgreSQL, instead of PostgreSQL going down under the requests in flight.
  const proc = spawn(bin.postgres, args, { ...(runAs ?? {}), cwd: '/', detached: true, env: { ...process.env, LC_MESSAGES: locale }, stdio: ['ignore', 'pipe', 'pipe'] });
  let recent = '';
  let ready = false;
  await new Promise<void>((resolve, reject) => {
    const onOutput = (chunk: Buffer) => {
      const text = chunk.toString('utf8');
      // PostgreSQL's own line goes in `postgres`: a `msg` field would be a second `msg` key.
      for (const line of text.split('\n')) if (line.trim()) pgLog.debug({ postgres: line.trim() }, 'PostgreSQL output');
      if (!ready) {
        recent = (recent + text).slice(-4000);
        if (recent.includes('database system is ready to accept connections')) {
          ready = true;
          resolve();
        }
      }
    };
    proc.stdout!.on('data', onOutput);
    proc.stderr!.on('data', onOutput);
    proc.once('error', (e) => reject(new EmbeddedDatabaseError(`The embedded PostgreSQL could not be started (${errorText(e)}): ${NO_ROOT_HINT}`)));
    proc.once('exit', (code, signal) => {
      if (!ready) reject(new EmbeddedDatabaseError(`The embedded PostgreSQL stopped while starting (${signal ?? `exit ${code}`}: ${lastLine(recent)}): fix the cause, or set SERVICE_DATABASE_URL`));
      else if (!stopping.has(proc)) pgLog.error({ code, signal }, 'The embedded PostgreSQL exited');
    });
  });
  return proc;
}

/** SIGINT (fast shutdown: disconnect clients, checkpoint) and wait; SIGKILL after a minute. */
export async function stopPostmaster(proc: ChildProcess): Promise<void> {
  if (proc.exitCode !== null || proc.signalCode !== null) return;
  stopping.add(proc);
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  proc.kill('SIGINT');
  const timer = setTimeout(() => proc.kill('SIGKILL'), 60_000);
  await exited;
  clearTimeout(timer);
}

/**
 * After a crash or a kill, the previous postmaster may still be running (an orphan holding the
 * data directory) or may have left its pid file behind. Only called with the instance lock
 * held, so a postmaster found here has no live service: stop it; remove a stale file.
 */
export async function clearStalePostmaster(clusterDir: string, log: Logger): Promise<void> {
  const pidFile = path.join(clusterDir, 'postmaster.pid');
  let content: string;
  try {
    content = await fs.readFile(pidFile, 'utf8');
  } catch {
    return;
  }
  const pid = Number.parseInt(content.split('\n')[0] ?? '', 10);
  if (Number.isInteger(pid) && pid > 0 && (await isPostmasterOf(pid, clusterDir))) {
    log.warn({ pid }, 'Stopping a PostgreSQL left running by a previous start');
    process.kill(pid, 'SIGINT');
    for (let i = 0; i < 100 && (await isAlive(pid)); i++) await sleep(100);
    if (await isAlive(pid)) process.kill(pid, 'SIGKILL');
    for (let i = 0; i < 50 && (await isAlive(pid)); i++) await sleep(100);
  }
  if (await exists(pidFile)) {
    log.warn({ pidFile }, 'Removing a stale postmaster.pid');
    await fs.rm(pidFile, { force: true });
  }
}

async function isPostmasterOf(pid: number, clusterDir: string): Promise<boolean> {
  try {
    const cmdline = (await fs.readFile(`/proc/${pid}/cmdline`, 'utf8')).split('\0');
    return cmdline.some((a) => a.endsWith('postgres')) && cmdline.includes(clusterDir);
  } catch {
    return false;
  }
}

async function isAlive(pid: number): Promise<boolean> {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      srv.close(() => (addr && typeof addr === 'object' ? resolve(addr.port) : reject(new Error('no port'))));
    });
  });
}
