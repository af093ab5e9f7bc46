/**
 * The README's examples are a test: every fenced block marked ```bash readme-test runs, in
 * order, in one bash process (`set -euo pipefail`, so variables carry from block to block)
 * against the compiled service started here as the README says (`SERVICE_MULTI_TENANT_MODE=true`,
 * on a spare SERVICE_PORT, its own fresh database and data dir). Any non-zero exit fails the
 * test: the blocks use `curl -f` or `expect_status <code>` for every request.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { runProcess } from '../helpers/cli';
import { createFreshDatabase, type FreshDatabase } from '../helpers/fresh-database';
import { freePort } from '../helpers/pg-cluster';
import { buildOnce, startServerProcess, stopServer, waitUntilReady, type ServerProcess } from '../helpers/server-process';

jest.setTimeout(300_000);

const ROOT = path.resolve(__dirname, '..', '..');
const README = path.join(ROOT, 'README.md');
const MARKER = /^```bash readme-test[ \t]*$/;
const TENANTCTL_BIN = path.join(ROOT, (JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { bin: { tenantctl: string } }).bin.tenantctl);

interface Block {
  line: number;
  code: string;
}

/** The runnable blocks of the README, with the line each starts on. */
function runnableBlocks(markdown: string): Block[] {
  const lines = markdown.split('\n');
  const blocks: Block[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (!MARKER.test(lines[i]!)) continue;
    const start = i + 1;
    const body: string[] = [];
    for (i = start; i < lines.length && !/^```\s*$/.test(lines[i]!); i++) body.push(lines[i]!);
    if (i >= lines.length) throw new Error(`README.md:${start}: unterminated readme-test block`);
    blocks.push({ line: start, code: body.join('\n') });
  }
  return blocks;
}

let fresh: FreshDatabase;
let dataDir: string;
let server: ServerProcess;
let port: number;

beforeAll(async () => {
  await buildOnce();
  fresh = await createFreshDatabase('tenant_service_readme');
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tenant-service-readme-'));
  port = await freePort();
  // What the README's first terminal runs: `SERVICE_MULTI_TENANT_MODE=true npm start`.
  server = startServerProcess(port, {
    SERVICE_MULTI_TENANT_MODE: 'true',
    SERVICE_DATABASE_URL: fresh.url,
    SERVICE_DATA_DIR: dataDir,
    SERVICE_LOG_LEVEL: 'warn',
  });
  const status = await waitUntilReady(server, 120_000);
  if (status !== 200) throw new Error(`service not ready (last status ${status}): ${server.stderr()}`);
}, 300_000);

afterAll(async () => {
  if (server) await stopServer(server, 'SIGTERM');
  await fresh?.drop();
  if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
});

it('finds the runnable blocks', () => {
  const blocks = runnableBlocks(fs.readFileSync(README, 'utf8'));
  expect(blocks.length).toBeGreaterThanOrEqual(8);
  // Each block is self-checking: a request without -f and without expect_status could hide a failure.
  for (const b of blocks) {
    for (const [offset, line] of b.code.split('\n').entries()) {
      const command = line.replace(/#.*$/, '');
      if (/(^|[\s$(])curl\s/.test(command) && !/curl -f|expect_status|-w '%\{http_code\}'/.test(command)) {
        throw new Error(`README.md:${b.line + offset + 1}: curl without -f or expect_status: ${line.trim()}`);
      }
    }
  }
});

/** Shell languages a reader would paste into a terminal. */
const SHELL_FENCE = /^```(sh|bash|shell|zsh|console)\b(.*)$/;
const NOT_RUN = /^# Not run by test\/docs\/readme\.test\.ts: \S/;

it('runs every shell block, or says why it cannot', () => {
  const lines = fs.readFileSync(README, 'utf8').split('\n');
  const unmarked: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const fence = SHELL_FENCE.exec(lines[i]!);
    if (!fence) continue;
    if (MARKER.test(lines[i]!)) continue;
    if (!NOT_RUN.test(lines[i + 1] ?? '')) unmarked.push(`README.md:${i + 1}: ${lines[i]}`);
  }
  expect(unmarked).toEqual([]);
});

it('stays a document for users: short, without run logs or clock times', () => {
  const text = fs.readFileSync(README, 'utf8');
  expect(text.split('\n').length).toBeLessThanOrEqual(600);
  // A figure carries its date (YYYY-MM-DD), never a time of day or a machine's load.
  expect(text).not.toMatch(/\b\d{2}:\d{2} (ratios|pipeline)\b|load average/i);
});

it('runs every README block marked readme-test, in order, without a failure', async () => {
  const blocks = runnableBlocks(fs.readFileSync(README, 'utf8'));
  const script = [
    'set -euo pipefail',
    // `npx tenantctl` runs this package's bin (package.json's "bin"): here the same file with the
    // same arguments, run directly to skip npm's own start-up at each of the README's calls.
    `npx() { if [ "\${1-}" = tenantctl ]; then shift; node ${JSON.stringify(TENANTCTL_BIN)} "$@"; else command npx "$@"; fi; }`,
    ...blocks.map((b) => `echo "::: README.md line ${b.line}" >&2\n${b.code}`),
    'echo "::: all README blocks passed" >&2',
  ].join('\n');
  const env: Record<string, string> = {
    PATH: `${path.join(ROOT, 'node_modules', '.bin')}:${process.env.PATH ?? '/usr/bin:/bin'}`,
    HOME: process.env.HOME ?? os.tmpdir(),
    SERVICE_PORT: String(port),
    SERVICE_DATA_DIR: dataDir,
  };
  const result = await runProcess('bash', ['-c', script], { cwd: ROOT, env });
  const lastBlock = [...result.stderr.matchAll(/::: README\.md line (\d+)/g)].at(-1)?.[1];
  const report = `exit ${result.code}; last block started at README.md:${lastBlock}\n--- stderr (tail)\n${result.stderr.slice(-3000)}\n--- stdout (tail)\n${result.stdout.slice(-3000)}`;
  expect(result.code === 0 ? 'ok' : report).toBe('ok');
  expect(result.stderr).toContain('::: all README blocks passed');
  // Spot checks that the story did what it says.
  expect(result.stdout).toContain('"slug":"acme"');
  expect(result.stdout).toContain('"tenant_slug":"globex"');
  expect(result.stdout).toContain('"graphql_endpoint":"/graphql"');
  expect(result.stdout).toContain('"source":"email_domain"');
  expect(result.stdout).toMatch(/^X-Tenant-Slug: acme\r?$/im); // the gateway decision's headers for Bob
});
