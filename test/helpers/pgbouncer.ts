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

async function waitForPort(port: number, deadline: number, child: ChildProcess, log: string): Promise<void> {
  for (;;) {
    if (child.exitCode !== null) throw new Error(`pgbouncer exited (${child.exitCode}): ${fs.existsSync(log) ? fs.readFileSync(log, 'utf8') : ''}`);
    const ok = await new Promise<boolean>((resolve) => {
      const s = net.connect(port, '127.0.0.1', () => {
        s.end();
        resolve(true);
      });
      s.on('error', () => resolve(false));
    });
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`pgbouncer did not listen on ${port}: ${fs.existsSync(log) ? fs.readFileSync(log, 'utf8') : ''}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Starts PgBouncer (transaction mode, auth_type any) forwarding every database to `serverUrl`'s host. */
export async function startPgBouncer(serverUrl: string, opts: { poolSize?: number } = {}): Promise<PgBouncer> {
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
  const bin = process.env.PGBOUNCER_BIN ?? '/usr/sbin/pgbouncer';
  // PgBouncer refuses to run as root.
  const child = asRoot() ? spawn('runuser', ['-u', 'postgres', '--', bin, ini], { stdio: 'ignore' }) : spawn(bin, [ini], { stdio: 'ignore' });
  await waitForPort(port, Date.now() + 15_000, child, log);
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
