/**
 * The lint rules that keep the code's shape: library internals (deep imports, knex's private
 * fields, replaced driver methods), the direction of the layers, and rows kept in src/db (the
 * domain reaches tables only through src/db/queries, which export no row type or alias of one). Each fixture of
 * test/fixtures/lint is linted as if it were a file of its layer; every line marked
 * `// expect: <rule>` must be reported by that rule, and no other line.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '../..');
const ESLINT = path.join(ROOT, 'node_modules/eslint/bin/eslint.js');

interface Message {
  ruleId: string | null;
  line: number;
}

/** Lints `code` as the file `asFile` (relative to the repository) with the project's config. */
function lintAs(code: string, asFile: string): Message[] {
  let out: string;
  try {
    out = execFileSync(process.execPath, [ESLINT, '--format', 'json', '--stdin', '--stdin-filename', asFile], { cwd: ROOT, input: code, encoding: 'utf8' });
  } catch (err) {
    // eslint exits 1 when it reports errors; its JSON is still on stdout.
    out = (err as { stdout: string }).stdout;
  }
  const [result] = JSON.parse(out) as Array<{ messages: Message[] }>;
  return result!.messages;
}

function expectedIn(code: string): string[] {
  return code
    .split('\n')
    .flatMap((line, i) => {
      const m = /\/\/ expect: (\S+)\s*$/.exec(line);
      return m ? [`${i + 1} ${m[1]}`] : [];
    });
}

const FIXTURES: Array<[fixture: string, asFile: string]> = [
  ['db-internals.ts', 'src/db/lint-fixture.ts'],
  ['domain-layers.ts', 'src/domain/lint-fixture.ts'],
  ['domain-rows.ts', 'src/domain/tenant-admin/lint-fixture.ts'],
  ['db-row-exports.ts', 'src/db/queries/lint-fixture.ts'],
  ['http-layers.ts', 'src/http/lint-fixture.ts'],
  ['auth-layers.ts', 'src/auth/lint-fixture.ts'],
  ['context-neutral.ts', 'src/context/lint-fixture.ts'],
  ['errors-imports-nothing.ts', 'src/errors.ts'],
];

describe.each(FIXTURES)('%s linted as %s', (fixture, asFile) => {
  it('is refused exactly on the marked lines', () => {
    const code = fs.readFileSync(path.join(ROOT, 'test/fixtures/lint', fixture), 'utf8');
    const expected = expectedIn(code);
    expect(expected.length).toBeGreaterThan(0);
    const reported = [...new Set(lintAs(code, asFile).map((m) => `${m.line} ${m.ruleId}`))];
    expect(reported.sort()).toEqual(expected.sort());
  }, 60_000);
});

it('src has no deep import of knex, no knex private field and no replaced query method', () => {
  const offending: string[] = [];
  const walk = (dir: string): void => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const file = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(file);
      else if (/knex\/lib|__knex|\.query = /.test(fs.readFileSync(file, 'utf8'))) offending.push(path.relative(ROOT, file));
    }
  };
  walk(path.join(ROOT, 'src'));
  expect(offending).toEqual([]);
});
