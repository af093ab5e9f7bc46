/**
 * Comments say why and link the docs page that states the rule (docs/architecture.md#development).
 * Every file git tracks under src/, console/src/, bench/, scripts/, test/ and examples/ is read:
 * no citation of a document readers do not have (the product and spec notes, a section sign with
 * a number, an issue number), and every path to a docs page or a source file exists, with its
 * `#anchor` a heading of that page. This file's own fixtures are built from pieces so that the
 * scan of this file passes.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '../..');
const SCANNED = ['src', 'console/src', 'bench', 'scripts', 'test', 'examples'];
const BINARY = /\.(png|jpe?g|gif|ico|woff2?|ttf|pdf|gz|zip)$/i;

/** Citations of documents outside the repository. */
const FORBIDDEN: Array<[RegExp, string]> = [
  [/(?<![\w/.-])(?:PRODUCT|SPEC|ARCHITECTURE)\.md\b/i, 'cites a document that is not in the repository'],
  [/\u00a7\s?\d/, 'cites a numbered section of a document that is not in the repository'],
  [/\bissues?\s+#?\d/i, 'cites an issue number'],
];

/**
 * A repository path: docs pages, source files, the README; `../` prefixes allowed. Not JSON: a
 * comment may name an output file (bench/results.json) that only a run writes.
 */
const REPO_PATH =
  /(?<![\w@/.-])((?:\.\.?\/)*)((?:(?:docs|src|console|test|bench|scripts|examples|generated)\/[\w./-]*\w|README)\.(?:md|tsx?|m?js|cjs|ya?ml|sql|sh)(?![\w-]))(#[\w-]*)?/g;

/** GitHub's anchor of a heading: markup and punctuation dropped, lowercase, spaces → `-`. */
export function githubAnchor(heading: string): string {
  return heading
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\p{M}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

const anchorCache = new Map<string, Set<string>>();

/** The anchors of a Markdown file's headings (outside fenced code), duplicates numbered as GitHub does. */
function anchorsOf(file: string): Set<string> {
  const cached = anchorCache.get(file);
  if (cached) return cached;
  const anchors = new Set<string>();
  let fence: string | null = null;
  for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
    const f = /^\s*(```|~~~)/.exec(line);
    if (f) {
      if (fence === null) fence = f[1]!;
      else if (fence === f[1]) fence = null;
      continue;
    }
    const h = fence === null ? /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line) : null;
    if (!h) continue;
    const base = githubAnchor(h[1]!);
    let anchor = base;
    for (let n = 1; anchors.has(anchor); n++) anchor = `${base}-${n}`;
    anchors.add(anchor);
  }
  anchorCache.set(file, anchors);
  return anchors;
}

const CODE = /\.(tsx?|m?js|cjs|css)$/;

/**
 * The part of each line a reader takes for prose: in code, the comments (`//` after a space or at
 * the line's start, and block comments opened after a space or at the line's start), so that a
 * string naming a file that is only a name (a lint fixture's pretended path) is not a citation;
 * elsewhere the whole line.
 */
function proseOf(file: string, lines: string[]): string[] {
  if (!CODE.test(file)) return lines;
  let inBlock = false;
  return lines.map((line) => {
    let prose = '';
    let rest = line;
    while (rest !== '') {
      if (inBlock) {
        const end = rest.indexOf('*/');
        prose += end < 0 ? rest : rest.slice(0, end);
        if (end < 0) break;
        inBlock = false;
        rest = rest.slice(end + 2);
        continue;
      }
      const open = /(?:^|\s)\/(\*|\/)/.exec(rest);
      if (!open) break;
      if (open[1] === '/') {
        prose += rest.slice(open.index);
        break;
      }
      inBlock = true;
      rest = rest.slice(open.index + open[0].length);
    }
    return prose;
  });
}

/**
 * What is wrong with the citations of `text`, the content of `file` (relative to the repository):
 * one `file:line: …` per problem. Paths are relative to the repository, or to the file when they
 * start with `./` or `../` or are a Markdown link's target (as GitHub renders them). The forbidden
 * citations count anywhere (test names too); paths only in comments of code.
 */
export function citationProblems(file: string, text: string): string[] {
  const problems: string[] = [];
  const lines = text.split('\n');
  const prose = proseOf(file, lines);
  lines.forEach((line, i) => {
    const at = `${file}:${i + 1}`;
    for (const [pattern, why] of FORBIDDEN) {
      const m = pattern.exec(line);
      if (m) problems.push(`${at}: "${m[0]}" ${why}; link a docs/*.md section instead`);
    }
    for (const m of prose[i]!.matchAll(REPO_PATH)) {
      const [whole, up, target, anchor] = m as unknown as [string, string, string, string | undefined];
      // A Markdown link's target is relative to its page; a path in its text, to the repository.
      const markdownLink = file.endsWith('.md') && prose[i]!.slice(0, m.index).endsWith('](');
      const relativeToFile = up !== '' || markdownLink;
      const resolved = path.resolve(relativeToFile ? path.join(ROOT, path.dirname(file)) : ROOT, up + target);
      if (!fs.existsSync(resolved)) {
        problems.push(`${at}: "${whole}" names a file that does not exist`);
      } else if (anchor !== undefined && resolved.endsWith('.md') && !anchorsOf(resolved).has(anchor.slice(1))) {
        problems.push(`${at}: "${whole}" names no heading of ${path.relative(ROOT, resolved)}`);
      }
    }
  });
  return problems;
}

function trackedFiles(): string[] {
  const out = execFileSync('git', ['ls-files', '-z', '--', ...SCANNED], { cwd: ROOT, encoding: 'utf8' });
  return out.split('\0').filter((f) => f !== '' && !BINARY.test(f) && fs.existsSync(path.join(ROOT, f)));
}

it('tracked sources cite docs pages and files that exist, and no outside document', () => {
  const files = trackedFiles();
  expect(files.length).toBeGreaterThan(100);
  const problems = files.flatMap((f) => {
    const text = fs.readFileSync(path.join(ROOT, f), 'utf8');
    return text.includes('\0') ? [] : citationProblems(f, text);
  });
  expect(problems).toEqual([]);
});

describe('planted citations', () => {
  const md = '.md';
  const sign = '\u00a7';
  it.each([
    [`// the rule (PRODUCT${md} ${sign}3)`, 2],
    [`/** see SPEC${md} */`, 1],
    [`// in ARCHITECTURE${md}'s order`, 1],
    [`// as ${sign}13 says`, 1],
    [`// issue${' '}17 item 3`, 1],
    [`// Issue ${'#'}13's measure`, 1],
    [`// docs/no-such-page${md}`, 1],
    [`// docs/tenants${md}#no-such-section`, 1],
    [`// docs/tenants${md}#Tenant-Resolution`, 1],
    [`// ../docs/tenants${md}#tenant-resolution`, 1], // from src/http/, ../docs is src/docs
    [`// src/no/such-file${'.ts'}`, 1],
  ])('%s is refused with %i problem(s)', (line, count) => {
    expect(citationProblems('src/http/fixture.ts', line)).toHaveLength(count);
  });

  it.each([
    `// docs/tenants${md}#tenant-resolution`,
    `// docs/architecture${md}#how-a-request-is-handled`,
    `// src/tenancy/decide${'.ts'} and README${md}#which-tenant-a-request-belongs-to`,
    `const mode = process.env.PRODUCT_AUTH; // RFC 7515 section 4.1.11`,
  ])('%s is accepted', (line) => {
    expect(citationProblems('src/http/fixture.ts', line)).toEqual([]);
  });

  it('in code, only comments name files', () => {
    expect(citationProblems('src/http/fixture.ts', `const asFile = 'src/no/such-file${'.ts'}';`)).toEqual([]);
    expect(citationProblems('src/http/fixture.ts', `/* src/no/such-file${'.ts'} */`)).toHaveLength(1);
    expect(citationProblems('src/http/fixture.ts', `/**\n * the rule: docs/tenants${md}#nope\n */`)).toHaveLength(1);
    expect(citationProblems('src/http/fixture.ts', `const glob = 'src/**/*.ts';\n// docs/nope${md}`)).toHaveLength(1);
  });

  it('a link from a Markdown file resolves from its directory', () => {
    expect(citationProblems('bench/README.md', `[x](../docs/operations${md}#rate-limits)`)).toEqual([]);
    expect(citationProblems('bench/README.md', `[x](docs/operations${md})`)).toHaveLength(1);
    expect(citationProblems('bench/README.md', `[docs/operations${md}](../docs/operations${md})`)).toEqual([]);
  });

  it('anchors follow GitHub: punctuation dropped, spaces to hyphens, duplicates numbered', () => {
    expect(githubAnchor('Connection poolers (PgBouncer)')).toBe('connection-poolers-pgbouncer');
    expect(githubAnchor('The local provider: `tenantctl console`')).toBe('the-local-provider-tenantctl-console');
    expect(githubAnchor("Identity providers' organizations")).toBe('identity-providers-organizations');
  });
});
