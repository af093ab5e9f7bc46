#!/usr/bin/env node
/**
 * `npm start`'s prestart (and `npm ci`'s prepare): builds only what an input changed since its
 * last successful build, so a restart with unchanged sources starts at once. Two builds:
 *
 * - the service: tsc -p tsconfig.build.json into dist/. Inputs: src/, generated/, bench/, the
 *   tsconfig files, package.json and package-lock.json. Stamp: dist/.build-stamp.
 * - the console: Vite (console/vite.config.mts) into dist/console. Inputs: console/, generated/,
 *   src/context/event-actions.ts,
 *   package.json and package-lock.json. Stamp: dist/.console-build-stamp.
 *
 * A missing stamp or output means "build". `--force` builds both.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const TSC = path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
const VITE = path.join(ROOT, 'node_modules', 'vite', 'bin', 'vite.js');
const TARGETS = [
  {
    name: 'service',
    stamp: path.join(ROOT, 'dist', '.build-stamp'),
    output: path.join(ROOT, 'dist', 'src', 'server.js'),
    inputs: ['src', 'generated', 'bench', 'tsconfig.json', 'tsconfig.build.json', 'package.json', 'package-lock.json'],
    command: [TSC, '-p', 'tsconfig.build.json'],
    // tsc never deletes: the output of a moved or deleted source would stay and could still be
    // required (dist/src/config.js shadows dist/src/config/index.js).
    prune: ['src', 'generated', 'bench'],
  },
  {
    name: 'console',
    stamp: path.join(ROOT, 'dist', '.console-build-stamp'),
    output: path.join(ROOT, 'dist', 'console', 'index.html'),
    inputs: ['console', 'generated', 'src/context/event-actions.ts', 'package.json', 'package-lock.json'],
    command: [VITE, 'build', '--config', 'console/vite.config.mts'],
  },
];

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

/** Why `target` needs a build, or null when its output is up to date. */
function staleReason(target) {
  if (process.argv.includes('--force')) return 'forced';
  if (!fs.existsSync(target.output)) return 'no build yet';
  let stamp;
  try {
    stamp = fs.statSync(target.stamp).mtimeMs;
  } catch {
    return 'no build stamp';
  }
  for (const input of target.inputs) {
    if (newest(path.join(ROOT, input)) > stamp) return `${input} changed`;
  }
  return null;
}

/** Removes the .js / .js.map / .d.ts files of `outDir` whose .ts in `srcDir` no longer exists, and directories left empty. */
function pruneOrphans(outDir, srcDir) {
  let entries;
  try {
    entries = fs.readdirSync(outDir, { withFileTypes: true });
  } catch {
    return;
  }
  for (const entry of entries) {
    const out = path.join(outDir, entry.name);
    if (entry.isDirectory()) {
      pruneOrphans(out, path.join(srcDir, entry.name));
      if (fs.readdirSync(out).length === 0) fs.rmdirSync(out);
      continue;
    }
    const m = /^(.*)\.(js|js\.map|d\.ts)$/.exec(entry.name);
    if (m && !fs.existsSync(path.join(srcDir, `${m[1]}.ts`))) fs.rmSync(out, { force: true });
  }
}

for (const target of TARGETS) {
  const reason = staleReason(target);
  if (!reason) continue;
  process.stderr.write(`tenant-service: building the ${target.name} (${reason})\n`);
  const started = Date.now();
  try {
    execFileSync(process.execPath, target.command, { cwd: ROOT, stdio: 'inherit' });
  } catch {
    process.stderr.write(`tenant-service: the ${target.name} build failed\n`);
    process.exit(1);
  }
  for (const dir of target.prune ?? []) pruneOrphans(path.join(ROOT, 'dist', dir), path.join(ROOT, dir));
  // The stamp takes the time the build STARTED: a file saved during the build triggers the next one.
  fs.mkdirSync(path.dirname(target.stamp), { recursive: true });
  fs.writeFileSync(target.stamp, `${new Date(started).toISOString()}\n`);
  fs.utimesSync(target.stamp, new Date(started), new Date(started));
}

// tsc writes 0644, and `npx tenantctl` runs the package's own bin (package.json "bin") directly.
const CLI = path.join(ROOT, 'dist', 'src', 'cli', 'main.js');
if (fs.existsSync(CLI)) fs.chmodSync(CLI, 0o755);
