#!/usr/bin/env node
/**
 * `npm start`'s prestart: compiles (tsc -p tsconfig.build.json) only when an input of the build
 * is newer than the last successful build, so a restart with unchanged sources starts at once.
 *
 * Inputs: everything under src/, generated/ and bench/, plus the tsconfig files, package.json and
 * package-lock.json (a changed dependency can change the types). The stamp dist/.build-stamp is
 * written after a successful build; a missing stamp or server entry means "build".
 * `--force` always builds.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const STAMP = path.join(ROOT, 'dist', '.build-stamp');
const ENTRY = path.join(ROOT, 'dist', 'src', 'server.js');
const INPUT_DIRS = ['src', 'generated', 'bench'];
const INPUT_FILES = ['tsconfig.json', 'tsconfig.build.json', 'package.json', 'package-lock.json'];

/** The newest modification time (ms) of a file or of any file below a directory; 0 when absent. */
function newest(p) {
  let st;
  try {
    st = fs.statSync(p);
  } catch {
    return 0;
  }
  if (!st.isDirectory()) return st.mtimeMs;
  let max = st.mtimeMs; // a deleted file changes its directory's mtime
  for (const name of fs.readdirSync(p)) max = Math.max(max, newest(path.join(p, name)));
  return max;
}

/** Why a build is needed, or null when dist/ is up to date. */
function staleReason() {
  if (process.argv.includes('--force')) return 'forced';
  if (!fs.existsSync(ENTRY)) return 'no build yet';
  let stamp;
  try {
    stamp = fs.statSync(STAMP).mtimeMs;
  } catch {
    return 'no build stamp';
  }
  for (const input of [...INPUT_DIRS, ...INPUT_FILES]) {
    if (newest(path.join(ROOT, input)) > stamp) return `${input} changed`;
  }
  return null;
}

const reason = staleReason();
if (reason) {
  process.stderr.write(`tenant-service: building (${reason})\n`);
  const started = Date.now();
  try {
    execFileSync(process.execPath, [path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.build.json'], {
      cwd: ROOT,
      stdio: 'inherit',
    });
  } catch {
    process.stderr.write('tenant-service: build failed\n');
    process.exit(1);
  }
  // The stamp takes the time the build STARTED: a file saved during the build triggers the next one.
  fs.writeFileSync(STAMP, `${new Date(started).toISOString()}\n`);
  fs.utimesSync(STAMP, new Date(started), new Date(started));
}

// tsc writes 0644, and `npx tenantctl` runs the package's own bin (package.json "bin") directly.
const CLI = path.join(ROOT, 'dist', 'src', 'cli', 'main.js');
if (fs.existsSync(CLI)) fs.chmodSync(CLI, 0o755);
