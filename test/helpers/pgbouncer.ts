/**
 * A private PgBouncer (Debian's /usr/sbin/pgbouncer, or PGBOUNCER_BIN) in transaction pooling
 * mode in front of a PostgreSQL server, on a spare port with a generated ini. Every server
 * connection is reset after every transaction (`server_reset_query_always = 1`, DISCARD ALL),
 * so any session state the service relied on (SET ROLE, set_config(..., false)) is gone by its
 * next transaction: what survives is only what each transaction sets for itself.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { freePort } from './pg-cluster';

export interface PgBouncer {
  readonly port: number;
  /** `url` (a PostgreSQL URL) with its host and port replaced by this PgBouncer's. */
  via(url: string): string;
  stop(): Promise<void>;
}

const asRoot = () => os.userInfo().uid === 0;

/**
 * The pgbouncer binary: PGBOUNCER_BIN when set (only that), else the first `pgbouncer` on PATH,
 * else Debian's /usr/sbin/pgbouncer (outside a non-root user's PATH); null when none exists.
 */
export function pgbouncerBinary(): string | null {
  const executable = (f: string) => {
    try {
      fs.accessSync(f, fs.constants.X_OK);
      return fs.statSync(f).isFile();
    } catch {
      return false;
    }
  };
  if (process.env.PGBOUNCER_BIN) return executable(process.env.PGBOUNCER_BIN) ? process.env.PGBOUNCER_BIN : null;
  const candidates = [...(process.env.PATH ?? '').split(':').filter(Boolean).map((d) => path.join(d, 'pgbouncer')), '/usr/sbin/pgbouncer'];
  return candidates.find(executable) ?? null;
}

/** Why no PgBouncer can be started here, as one sentence that says what to do. */
export function pgbouncerMissing(): string {
  return process.env.PGBOUNCER_BIN
    ? `pgbouncer not found at PGBOUNCER_BIN=${process.env.PGBOUNCER_BIN}: point PGBOUNCER_BIN at the pgbouncer binary, or unset it`
    : 'pgbouncer not found on PATH or at /usr/sbin/pgbouncer: install it (apt-get install pgbouncer) or set PGBOUNCER_BIN';
}

async function waitForPort(port: number, deadline: number, child: ChildProcess, log: string, output: () => string): Promise<void> {
  const why = () => [fs.existsSync(log) ? fs.readFileSync(log, 'utf8').trim() : '', output().trim()].filter(Boolean).join('\n') || 'no output';
  for (;;) {
    if (child.exitCode !== null) throw new Error(`pgbouncer exited (${child.exitCode}): ${why()}`);
    const ok = await new Promise<boolean>((resolve) => {
      const s = net.connect(port, '127.0.0.1', () => {
        s.end();
        resolve(true);
      });
      s.on('error', () => resolve(false));
    });
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`pgbouncer did not listen on ${port}: ${why()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Starts PgBouncer (transaction mode, auth_type any) forwarding every database to `serverUrl`'s host. */
export async function startPgBouncer(serverUrl: string, opts: { poolSize?: number } = {}): Promise<PgBouncer> {
  const bin = pgbouncerBinary();
  if (!bin) throw new Error(pgbouncerMissing());
  const server = new URL(serverUrl);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tenant-service-pgbouncer-'));
  fs.chmodSync(dir, 0o777);
  const port = await freePort();
  const log = path.join(dir, 'pgbouncer.log');
  const ini = path.join(dir, 'pgbouncer.ini');
  fs.writeFileSync(
    ini,
    `[databases]
* = host=${server.hostname} port=${server.port || 5432} user=${decodeURIComponent(server.username || 'postgres')}

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = ${port}
unix_socket_dir =
auth_type = any
pool_mode = transaction
default_pool_size = ${opts.poolSize ?? 3}
max_client_conn = 500
server_reset_query = DISCARD ALL
server_reset_query_always = 1
ignore_startup_parameters = extra_float_digits,statement_timeout
logfile = ${log}
pidfile = ${path.join(dir, 'pgbouncer.pid')}
`,
  );
  // PgBouncer refuses to run as root.
  const stdio: ['ignore', 'ignore', 'pipe'] = ['ignore', 'ignore', 'pipe'];
  const child = asRoot() ? spawn('runuser', ['-u', 'postgres', '--', bin, ini], { stdio }) : spawn(bin, [ini], { stdio });
  let output = '';
  child.stderr!.on('data', (d: Buffer) => (output = (output + d.toString('utf8')).slice(-4000)));
  child.once('error', (e) => (output += `${e.message}\n`));
  try {
    await waitForPort(port, Date.now() + 15_000, child, log, () => output);
  } catch (err) {
    if (child.exitCode === null) child.kill('SIGKILL');
    fs.rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  return {
    port,
    via(url: string) {
      const u = new URL(url);
      u.hostname = '127.0.0.1';
      u.port = String(port);
      return u.toString();
    },
    async stop() {
      const pidFile = path.join(dir, 'pgbouncer.pid');
      const pid = fs.existsSync(pidFile) ? Number(fs.readFileSync(pidFile, 'utf8').trim()) : null;
      if (child.exitCode === null) {
        const exited = new Promise((r) => child.once('exit', r));
        if (pid) process.kill(pid, 'SIGTERM');
        else child.kill('SIGTERM');
        // unref: a timer left behind would keep jest's process alive after the run.
        await Promise.race([exited, new Promise((r) => setTimeout(r, 5000).unref())]);
        if (child.exitCode === null) child.kill('SIGKILL');
      }
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
