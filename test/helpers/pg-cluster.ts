/**
 * A throwaway PostgreSQL cluster on a spare port, so a test can stop and start "the database"
 * under a running service without touching the shared server on 5432. Uses the system
 * PostgreSQL binaries (initdb, pg_ctl) run as the `postgres` user when the tests run as root.
 */
import { execFile } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** Directory of initdb/pg_ctl: PG_BIN, else the newest /usr/lib/postgresql/<v>/bin. */
export function postgresBinDir(): string {
  if (process.env.PG_BIN) return process.env.PG_BIN;
  const root = '/usr/lib/postgresql';
  const versions = fs.existsSync(root) ? fs.readdirSync(root).filter((v) => /^\d+$/.test(v)).sort((a, b) => Number(b) - Number(a)) : [];
  if (!versions.length) throw new Error('PostgreSQL server binaries not found: set PG_BIN to the directory holding initdb and pg_ctl');
  return path.join(root, versions[0]!, 'bin');
}

/**
 * A free TCP port on the loopback interface, for a child process (a server, PostgreSQL,
 * PgBouncer, nginx) to listen on. It is taken below the kernel's ephemeral range
 * (net.ipv4.ip_local_port_range), at random: a port that listen(0) handed out goes back to that
 * range when closed, where any process's next outgoing connection (to PostgreSQL, Redis, …) may
 * take it before the child listens, and the child then fails to start. Below the range only
 * another test's pick can collide, and the picks are random among ~20 000 ports.
 */
export async function freePort(): Promise<number> {
  const low = ephemeralRangeStart();
  const from = 10_000;
  if (low - from < 1_000) return kernelPort();
  for (let attempt = 0; attempt < 200; attempt++) {
    const port = from + crypto.randomInt(low - from);
    if (await canListen(port)) return port;
  }
  throw new Error(`no free port between ${from} and ${low - 1} in 200 tries`);
}

function ephemeralRangeStart(): number {
  try {
    const low = Number(fs.readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    return Number.isInteger(low) && low > 0 ? low : 32_768;
  } catch {
    return 32_768;
  }
}

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = net.createServer();
    srv.once('error', () => resolve(false));
    srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
  });
}

/** A port the kernel picks (when its ephemeral range leaves no room below it). */
function kernelPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      srv.close(() => (addr && typeof addr === 'object' ? resolve(addr.port) : reject(new Error('no port'))));
    });
  });
}

export interface ThrowawayCluster {
  /** Superuser URL of the cluster's `postgres` database. */
  readonly url: string;
  readonly port: number;
  readonly dir: string;
  /** Starts the server and waits until it accepts connections. */
  start(): Promise<void>;
  /** `pg_ctl stop -m fast`: disconnects every client and shuts down. */
  stop(): Promise<void>;
  /** Stops the server (if running) and deletes its files. */
  destroy(): Promise<void>;
}

const asRoot = () => os.userInfo().uid === 0;

/** Runs a PostgreSQL binary, as the `postgres` system user when we are root (it refuses root). */
async function pgExec(bin: string, args: string[]): Promise<string> {
  const file = path.join(postgresBinDir(), bin);
  const { stdout } = asRoot() ? await run('runuser', ['-u', 'postgres', '--', file, ...args]) : await run(file, args);
  return stdout;
}

/** Creates (initdb) a cluster in a fresh temp dir with trust authentication; not started yet. */
export async function createThrowawayCluster(): Promise<ThrowawayCluster> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tenant-service-pg-'));
  fs.chmodSync(dir, 0o755);
  const dataDir = path.join(dir, 'data');
  const logFile = path.join(dir, 'postgres.log');
  if (asRoot()) {
    const { stdout } = await run('id', ['-u', 'postgres']);
    const { stdout: gid } = await run('id', ['-g', 'postgres']);
    fs.chownSync(dir, Number(stdout.trim()), Number(gid.trim()));
  }
  await pgExec('initdb', ['-D', dataDir, '-U', 'postgres', '-A', 'trust', '--no-sync', '-E', 'UTF8']);
  const port = await freePort();
  let running = false;
  const cluster: ThrowawayCluster = {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    dir,
    async start() {
      await pgExec('pg_ctl', [
        'start',
        '-D',
        dataDir,
        '-w',
        '-t',
        '60',
        '-l',
        logFile,
        '-o',
        `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=50`,
      ]);
      running = true;
    },
    async stop() {
      await pgExec('pg_ctl', ['stop', '-D', dataDir, '-m', 'fast', '-w', '-t', '60']);
      running = false;
    },
    async destroy() {
      if (running) await cluster.stop().catch(() => undefined);
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
  return cluster;
}
