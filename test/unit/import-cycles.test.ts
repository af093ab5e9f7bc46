/**
 * scripts/check-import-cycles.mjs (docs/architecture.md#import-cycles) on small trees written to a
 * temporary folder: a tree without a cycle passes, and a cycle closed by any form of import (type
 * only, re-export, `import()`, `import('…').T`, a tsconfig alias, a `.js` specifier) fails, naming
 * its files and the line of each import in it.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const SCRIPT = path.resolve(__dirname, '../../scripts/check-import-cycles.mjs');

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'import-cycles-'));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

function write(files: Record<string, string>): void {
  for (const [name, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    fs.writeFileSync(path.join(dir, name), text);
  }
}

/** Runs the checker on `dirs` (relative to the tree): its exit code and what it printed. */
function check(...dirs: string[]): { status: number | null; out: string } {
  const r = spawnSync(process.execPath, [SCRIPT, ...dirs], { cwd: dir, encoding: 'utf8' });
  return { status: r.status, out: r.stdout + r.stderr };
}

test('a tree whose imports point one way passes', () => {
  write({
    'src/a.ts': "import { b } from './b';\nimport type { C } from './lib/c';\nexport const a: C = b;\n",
    'src/b.ts': "import { c } from './lib/c';\nexport const b = c;\n",
    'src/lib/c.ts': "import fs from 'node:fs';\nexport type C = number;\nexport const c: C = fs ? 1 : 0;\n",
  });
  expect(check('src')).toEqual({ status: 0, out: 'No import cycles in src.\n' });
});

test('a cycle closed by a type-only import fails, naming both files and both import lines', () => {
  write({
    'src/state.ts': "import { x } from './other';\n\nimport type { Input } from './validate';\nexport const state: Input | null = x;\n",
    'src/validate.ts': "import { state } from './state';\nexport interface Input { n: number }\nexport const v = state;\n",
    'src/other.ts': 'export const x = null;\n',
  });
  const { status, out } = check('src');
  expect(status).toBe(1);
  expect(out).toContain('1 import cycle:');
  expect(out).toContain('Cycle 1: 2 files: src/state.ts, src/validate.ts');
  expect(out).toContain("src/state.ts:3 → src/validate.ts   (type-only './validate' { Input })");
  expect(out).toContain("src/validate.ts:1 → src/state.ts   ('./state' { state })");
  expect(out).not.toContain('src/other.ts');
});

test.each([
  ['a re-export', "export { b } from './b';\n", 'export { b }'],
  ['a type re-export', "export type { B } from './b';\n", 'type-only'],
  ['a lazy import()', "export const load = () => import('./b');\n", 'import()'],
  ["an import('…') type", "export type T = import('./b').B;\n", "import('…').B"],
  ['a .js specifier', "import { b } from './b.js';\nexport const a = b;\n", "'./b.js'"],
  ['a side-effect import', "import './b';\n", '(side effects)'],
])('a cycle closed by %s fails', (_, aText, shown) => {
  write({ 'src/a.ts': aText, 'src/b.ts': "import type * as A from './a';\nexport type B = typeof A;\nexport const b = 1;\n" });
  const { status, out } = check('src');
  expect(status).toBe(1);
  expect(out).toContain('Cycle 1: 2 files: src/a.ts, src/b.ts');
  expect(out).toMatch(new RegExp(`src/a\\.ts:\\d+ → src/b\\.ts .*${shown.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`));
});

test("a cycle through a tsconfig paths alias fails (the console's @service/… imports)", () => {
  write({
    'tsconfig.json': JSON.stringify({ compilerOptions: { module: 'ESNext', moduleResolution: 'bundler', jsx: 'react-jsx', paths: { '@shared/*': ['./shared/*'] } } }),
    'app/page.tsx': "import { helper } from '@shared/helper';\nexport const Page = () => <p>{helper}</p>;\n",
    'shared/helper.ts': "import type { Page } from '../app/page';\nexport const helper = 'x';\nexport type P = typeof Page;\n",
  });
  const { status, out } = check('app', 'shared');
  expect(status).toBe(1);
  expect(out).toContain('Cycle 1: 2 files: app/page.tsx, shared/helper.ts');
  expect(out).toContain("app/page.tsx:1 → shared/helper.ts   ('@shared/helper' { helper })");
});

test('a file importing itself fails; separate cycles are listed separately with their shortest loop', () => {
  write({
    'src/self.ts': "import { s } from './self';\nexport const t = s;\nexport const s = 1;\n",
    'src/a.ts': "import { b } from './b';\nexport const a = b;\n",
    'src/b.ts': "import { c } from './c';\nexport const b = c;\n",
    'src/c.ts': "import { a } from './a';\nimport { d } from './d';\nexport const c = a + d;\n",
    'src/d.ts': 'export const d = 1;\n',
  });
  const { status, out } = check('src');
  expect(status).toBe(1);
  expect(out).toContain('2 import cycles:');
  expect(out).toContain('3 files: src/a.ts, src/b.ts, src/c.ts');
  expect(out).toContain('1 file: src/self.ts');
  const loop = out.split('Cycle').find((c) => c.includes('src/a.ts, src/b.ts'))!.split('every import')[0]!;
  expect(loop).toContain('src/a.ts:1 → src/b.ts');
  expect(loop).toContain('src/b.ts:1 → src/c.ts');
  expect(loop).toContain('src/c.ts:1 → src/a.ts');
  expect(out).not.toContain('src/d.ts');
});
