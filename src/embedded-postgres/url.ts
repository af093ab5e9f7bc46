/**
 * The URL of a running embedded PostgreSQL, read from its data dir (docs/operations.md
 * "The embedded database"): the password from `<data dir>/pg-password`, the port from the
 * running postmaster's `postmaster.pid` in the cluster (`<data dir>/pg`, or where that link
 * points). The port is a free one picked at each start, so the URL is read, not configured.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { EmbeddedDatabaseError } from './support';

/** The database the service keeps its tables in, on the embedded cluster. */
export const EMBEDDED_DATABASE = 'tenant_service';
/** The superuser of the embedded cluster (its password is `<data dir>/pg-password`). */
export const EMBEDDED_USER = 'postgres';

export interface EmbeddedDatabaseAddress {
  readonly url: string;
  readonly port: number;
  /** The postmaster's process id. */
  readonly pid: number;
}

/** The URL of the embedded PostgreSQL of `dataDir` (the database user `postgres`, 127.0.0.1). */
export function embeddedUrl(password: string, port: number): string {
  return `postgres://${EMBEDDED_USER}:${encodeURIComponent(password)}@127.0.0.1:${port}/${EMBEDDED_DATABASE}`;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // Another user's process (the postgres user's, when the service runs as root) is alive too.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Reads the running embedded PostgreSQL's address from `dataDir`; a clear error when there is none running. */
export async function readEmbeddedAddress(dataDir: string): Promise<EmbeddedDatabaseAddress> {
  const dir = path.resolve(dataDir);
  let password: string;
  try {
    password = (await fs.readFile(path.join(dir, 'pg-password'), 'utf8')).trim();
  } catch {
    throw new EmbeddedDatabaseError(
      `No embedded PostgreSQL in ${dir} (no pg-password there): point SERVICE_DATA_DIR / --data-dir at the data directory of a service started without SERVICE_DATABASE_URL`,
    );
  }
  let pidFile: string;
  try {
    pidFile = await fs.readFile(path.join(dir, 'pg', 'postmaster.pid'), 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EACCES') {
      throw new EmbeddedDatabaseError(`Not allowed to read the embedded PostgreSQL's postmaster.pid under ${dir}: run this as the user that runs the service (or root)`);
    }
    throw new EmbeddedDatabaseError(`The embedded PostgreSQL of ${dir} is not running (no postmaster.pid): start the service (npm start); the database's port is picked at each start`);
  }
  // postmaster.pid: the pid, the data directory, the start time, the port, … one per line.
  const lines = pidFile.split('\n');
  const pid = Number(lines[0]);
  const port = Number(lines[3]);
  if (!Number.isInteger(pid) || pid <= 0 || !Number.isInteger(port) || port <= 0 || port > 65535) {
    throw new EmbeddedDatabaseError(`The embedded PostgreSQL of ${dir} is starting or stopping (its postmaster.pid is incomplete): try again in a moment`);
  }
  if (!alive(pid)) throw new EmbeddedDatabaseError(`The embedded PostgreSQL of ${dir} is not running (its postmaster ${pid} has exited): start the service (npm start)`);
  return { url: embeddedUrl(password, port), port, pid };
}
