/**
 * What the parts of the embedded PostgreSQL share: the one error a start reports, the root the
 * `postgres` user's copies live under, and small file and text helpers.
 */
import fs from 'node:fs/promises';
import path from 'node:path';

/** A start that cannot go on; the message is one line saying what to do. */
export class EmbeddedDatabaseError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'EmbeddedDatabaseError';
  }
}

/** Where the `postgres` user's copies live when it cannot reach the checkout or the data dir. */
export const SHARED_ROOT = '/var/lib/tenant-service';
export const NO_ROOT_HINT = 'run as a non-root user, or set SERVICE_DATABASE_URL to a PostgreSQL of your own';

/** mkdir -p with 0755 on every level created (whatever the umask): the postgres user passes through. */
export async function makeSharedDir(dir: string): Promise<void> {
  const missing: string[] = [];
  for (let d = dir; !(await exists(d)); d = path.dirname(d)) missing.unshift(d);
  for (const d of missing) {
    await fs.mkdir(d).catch((e: NodeJS.ErrnoException) => {
      if (e.code !== 'EEXIST') throw e;
    });
    await fs.chmod(d, 0o755);
  }
}

export async function exists(p: string): Promise<boolean> {
  try {
    await fs.access(p);
    return true;
  } catch {
    return false;
  }
}

export const errorText = (e: unknown) => (e instanceof Error ? e.message : String(e)).split('\n')[0]!.slice(0, 300);
export const lastLine = (text: string) =>
  text
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean)
    .pop()
    ?.slice(0, 300) ?? 'no output';
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
