/**
 * The `postgres` system user: PostgreSQL refuses to run as root, so a root start runs it as that
 * user (created when missing) and checks what it can reach.
 */
import { execFile } from 'node:child_process';
import type { Logger } from 'pino';
import { EmbeddedDatabaseError, NO_ROOT_HINT, errorText } from './support';

export interface RunAs {
  uid: number;
  gid: number;
}

/** The `postgres` user, created as a system user when missing. */
export async function postgresUser(log: Logger): Promise<RunAs> {
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
export function asUser(runAs: RunAs, script: string, arg: string): Promise<boolean> {
  return new Promise((resolve) => {
    execFile('/bin/sh', ['-c', script, 'sh', arg], { uid: runAs.uid, gid: runAs.gid, cwd: '/' }, (err) => resolve(!err));
  });
}

function run(file: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(file, args, (err, stdout) => (err ? reject(err) : resolve(String(stdout).trim())));
  });
}
