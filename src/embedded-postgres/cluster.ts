/**
 * The cluster: where its directory is (a link under SHARED_ROOT when the `postgres` user cannot
 * enter the data dir), initdb on first use, and the settings it is started with.
 */
import { execFileSync, spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from 'pino';
import type { Binaries } from './binaries';
import { asUser, type RunAs } from './run-as';
import { EmbeddedDatabaseError, NO_ROOT_HINT, SHARED_ROOT, errorText, exists, lastLine, makeSharedDir } from './support';

/**
 * The real directory of the cluster: `<dataDir>/pg`, or the target of that path when it is a
 * link. As root, a data dir the postgres user cannot enter gets a cluster under SHARED_ROOT.
 */
export async function clusterDirectory(dataDir: string, runAs: RunAs | null, log: Logger): Promise<string> {
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

export async function initialise(bin: Binaries, clusterDir: string, password: string, locale: string, runAs: RunAs | null, pgLog: Logger): Promise<void> {
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

/** initdb's messages are read in English: the first available English-compatible locale. */
export function bestLocale(): string {
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

export async function readOrCreateSecret(file: string): Promise<string> {
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
