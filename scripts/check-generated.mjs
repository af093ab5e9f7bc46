// Regenerates generated/ from openapi.yaml into a temporary folder and fails when it differs
// from the committed copy.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'generated-check-'));
// The committed config (plugins and all), with only the output folder moved.
execFileSync(path.join(root, 'node_modules/.bin/openapi-ts'), ['--file', path.join(root, 'openapi-ts.config.ts'), '--output', path.join(tmp, 'generated')], { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] });

const list = (dir) =>
  fs
    .readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => path.relative(dir, path.join(e.parentPath ?? e.path, e.name)))
    .sort();
const want = list(path.join(tmp, 'generated'));
const have = list(path.join(root, 'generated'));
const problems = [];
for (const f of new Set([...want, ...have])) {
  const a = path.join(tmp, 'generated', f);
  const b = path.join(root, 'generated', f);
  if (!fs.existsSync(b)) problems.push(`missing: generated/${f}`);
  else if (!fs.existsSync(a)) problems.push(`extra: generated/${f}`);
  else if (fs.readFileSync(a, 'utf8') !== fs.readFileSync(b, 'utf8')) problems.push(`differs: generated/${f}`);
}
fs.rmSync(tmp, { recursive: true, force: true });
if (problems.length) {
  console.error(`generated/ does not match openapi.yaml (run \`npm run generate\`):\n  ${problems.join('\n  ')}`);
  process.exit(1);
}
console.log('generated/ matches openapi.yaml');
