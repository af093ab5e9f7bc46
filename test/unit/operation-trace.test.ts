/**
 * The files docs/architecture-operations.md#what-a-reader-opens-for-an-operation lists for three
 * operations are exactly those scripts/trace-operation.mjs finds in the code (so the doc cannot
 * drift from it), and no stage of src/http names an operation of the contract.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { readContractOperations } from '../../src/http/contract';

const ROOT = path.resolve(__dirname, '../..');
const OPERATIONS = ['createTenant', 'decideTenantAccess', 'updateScimUser'];

interface Traced {
  operationId: string;
  count: number;
  files: Array<{ file: string }>;
}

/** Per operation, the count and files the doc states: the bullets after its `**`id`** — n files:` line. */
function documented(): Map<string, { count: number; files: string[] }> {
  const text = fs.readFileSync(path.join(ROOT, 'docs/architecture-operations.md'), 'utf8');
  const out = new Map<string, { count: number; files: string[] }>();
  for (const m of text.matchAll(/^\*\*`(\w+)`\*\* — (\d+) files:\n\n((?:(?:- | {2}).*\n)+)/gm)) {
    out.set(m[1]!, { count: Number(m[2]), files: [...m[3]!.matchAll(/`(src\/[\w./-]+\.ts)`/g)].map((f) => f[1]!).sort() });
  }
  return out;
}

it('lists, for each of the three operations, exactly the files the trace finds', () => {
  const out = execFileSync(process.execPath, [path.join(ROOT, 'scripts/trace-operation.mjs'), ...OPERATIONS, '--json'], { cwd: ROOT, encoding: 'utf8' });
  const traced = JSON.parse(out) as Traced[];
  const doc = documented();
  expect([...doc.keys()].sort()).toEqual([...OPERATIONS].sort());
  for (const t of traced) {
    const files = t.files.map((f) => f.file).sort();
    expect({ id: t.operationId, count: t.count, files }).toEqual({ id: t.operationId, count: doc.get(t.operationId)!.count, files: doc.get(t.operationId)!.files });
  }
}, 300_000);

it('no file of src/http names an operation: what a stage does for one is declared in openapi.yaml', () => {
  const ids = readContractOperations().map((o) => o.operationId);
  const naming: string[] = [];
  for (const file of fs.readdirSync(path.join(ROOT, 'src/http'))) {
    const text = fs.readFileSync(path.join(ROOT, 'src/http', file), 'utf8');
    for (const id of ids) if (new RegExp(`['"\`]${id}['"\`]`).test(text)) naming.push(`${file}: ${id}`);
  }
  expect(naming).toEqual([]);
});
