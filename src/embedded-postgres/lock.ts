/**
 * One instance per cluster: `pg.lock` beside the cluster directory holds the pid (and process
 * start time) of the service that runs it. A second start refuses while that process lives; a
 * lock left by a killed run is cleaned up.
 */
import crypto from 'node:crypto';
import fsSync from 'node:fs';
import fs from 'node:fs/promises';
import type { Logger } from 'pino';
import { EmbeddedDatabaseError } from './support';

interface LockHolder {
  pid: number;
  /** /proc/<pid>/stat start time: a reused pid is not the holder. */
  start: string | null;
}

export interface InstanceLock {
  release(): void;
}

/**
 * Takes `file` for this process (created with link(2), so exactly one start wins). A holder
 * that is no longer running is removed; a live one makes this start refuse.
 */
export async function acquireLock(file: string, dataDir: string, log: Logger): Promise<InstanceLock> {
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
