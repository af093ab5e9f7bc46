/**
 * tenantctl as users run it: the compiled binary (`node dist/src/cli/main.js`) against a
 * listening server on the test database. SERVICE_DATA_DIR is the test data dir, so the admin
 * token the CLI mints from the local key verifies. JSON output is checked against the contract.
 */
import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import jwt from 'jsonwebtoken';
import type { AuditReport, CreateTenantResponse, Tenant } from '../../generated/types.gen';
import { contractProblem } from '../helpers/contract';
import { startTestApp, TEST_DATA_DIR, type TestApp } from '../helpers/app';
import { buildOnce } from '../helpers/server-process';
import { closeOwnerConnection, createTenant, ownerConnection, tokenFor, unique } from '../helpers/factories';

const ROOT = path.resolve(__dirname, '..', '..');
const CLI = path.join(ROOT, 'dist', 'src', 'cli', 'main.js');

let t: TestApp;
let server: http.Server;
let baseUrl: string;
const createdSlugs: string[] = [];

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the binary with exactly these variables (plus PATH/HOME): nothing leaks from jest's env. */
function tenantctl(args: string[], env: Record<string, string | undefined> = {}): Promise<Run> {
  const merged: Record<string, string | undefined> = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp', SERVICE_URL: baseUrl, SERVICE_DATA_DIR: TEST_DATA_DIR, ...env };
  // `undefined` removes a variable (e.g. SERVICE_URL, to test the default URL).
  for (const [k, v] of Object.entries(merged)) if (v === undefined) delete merged[k];
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, [CLI, ...args], {
      cwd: ROOT,
      env: merged as Record<string, string>,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    proc.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
    proc.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
    proc.on('error', reject);
    proc.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

function expectContract(method: string, url: string, status: number, body: unknown): void {
  expect(contractProblem(method, url, { status, headers: { 'content-type': 'application/json' }, body })).toBeNull();
}

/** A port nothing listens on: bound, then released. */
async function closedPort(): Promise<number> {
  const s = http.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
  const { port } = s.address() as AddressInfo;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

beforeAll(async () => {
  await buildOnce();
  t = await startTestApp();
  server = http.createServer(t.app);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}, 180_000);

afterAll(async () => {
  if (createdSlugs.length) await ownerConnection()('tenants').whereIn('slug', createdSlugs).del();
  await closeOwnerConnection();
  await new Promise<void>((r) => server.close(() => r()));
  await t.close();
});

const noEscapes = (r: Run) => {
  // Output to a pipe never carries colour codes.
  expect(r.stdout).not.toContain('\u001b[');
  expect(r.stderr).not.toContain('\u001b[');
};

describe('tenant create', () => {
  it('creates a tenant with settings and sample data (JSON), minting its own admin token', async () => {
    const slug = unique('cli-create');
    createdSlugs.push(slug);
    const r = await tenantctl(['tenant', 'create', '--name', 'CLI Corp', '--slug', slug, '--sample-data', '--settings', '{"billing_plan":"pro"}', '--format', 'json']);
    expect(r).toMatchObject({ code: 0, stderr: '' });
    const body = JSON.parse(r.stdout) as CreateTenantResponse;
    expectContract('POST', '/api/setup/tenant', 201, body);
    expect(body).toMatchObject({ name: 'CLI Corp', slug, existing: false });
    const row = await ownerConnection()('tenants').where({ id: body.tenant_id }).first('settings');
    expect(row.settings).toEqual({ billing_plan: 'pro' });
    const [{ n }] = await ownerConnection()('boards').where({ tenant_id: body.tenant_id }).count({ n: '*' });
    expect(Number(n)).toBeGreaterThan(0);
  });

  it('prints the result as aligned text, and a duplicate slug is the server\'s Conflict with exit 1', async () => {
    const slug = unique('cli-dup');
    createdSlugs.push(slug);
    const first = await tenantctl(['tenant', 'create', '--name', 'Dup', '--slug', slug]);
    expect(first.code).toBe(0);
    expect(first.stdout).toContain(slug);
    expect(first.stdout).toMatch(/^tenant_id {2}[0-9a-f-]{36}$/m);
    expect(first.stdout).toMatch(/^slug {7}/m);
    noEscapes(first);

    const again = await tenantctl(['tenant', 'create', '--name', 'Dup', '--slug', slug]);
    expect(again.code).toBe(1);
    expect(again.stdout).toBe('');
    expect(again.stderr).toBe(`error: Conflict: A tenant with slug '${slug}' already exists.\n`);
  });
});

describe('tenant update (membership policy)', () => {
  it('sets provision_from_claims and claims_issuer by slug or id; JSON is the Tenant', async () => {
    const tenant = await createTenant({ slug: unique('cli-pol') });
    createdSlugs.push(tenant.slug);
    const off = await tenantctl(['tenant', 'update', tenant.slug, '--provision-from-claims', 'false']);
    expect({ code: off.code, stderr: off.stderr }).toEqual({ code: 0, stderr: '' });
    expect(off.stdout).toMatch(/^provision_from_claims +false$/m);
    expect(off.stdout).toMatch(/^claims_issuer +\(any issuer\)$/m);
    noEscapes(off);
    expect(await ownerConnection()('tenants').where({ id: tenant.id }).first('provision_from_claims', 'claims_issuer')).toEqual({
      provision_from_claims: false,
      claims_issuer: null,
    });

    const on = await tenantctl(['tenant', 'update', tenant.id, '--provision-from-claims', 'true', '--claims-issuer', 'https://idp.example.com', '--format', 'json']);
    expect(on.code).toBe(0);
    const body = JSON.parse(on.stdout) as Tenant;
    expectContract('PUT', `/api/setup/tenant/${tenant.id}`, 200, body);
    expect(body.membership_policy).toEqual({ provision_from_claims: true, claims_issuer: 'https://idp.example.com' });

    const any = await tenantctl(['tenant', 'update', tenant.slug, '--any-issuer']);
    expect(any.code).toBe(0);
    expect(await ownerConnection()('tenants').where({ id: tenant.id }).first('provision_from_claims', 'claims_issuer')).toEqual({
      provision_from_claims: true,
      claims_issuer: null,
    });
  });

  it('refuses nothing-to-change, bad booleans and unknown slugs without changing anything', async () => {
    const tenant = await createTenant({ slug: unique('cli-pol') });
    createdSlugs.push(tenant.slug);
    const none = await tenantctl(['tenant', 'update', tenant.slug]);
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/nothing to change/);
    const bad = await tenantctl(['tenant', 'update', tenant.slug, '--provision-from-claims', 'maybe']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/expected true or false/);
    const unknown = await tenantctl(['tenant', 'update', unique('no-such'), '--provision-from-claims', 'false']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/no tenant with slug/);
    expect((await ownerConnection()('tenants').where({ id: tenant.id }).first('provision_from_claims')).provision_from_claims).toBe(true);
  });
});

describe('tenant list', () => {
  const prefix = unique('cli-page');
  const slugs: string[] = [];
  beforeAll(async () => {
    for (let i = 0; i < 5; i++) {
      const tenant = await createTenant({ slug: `${prefix}-${i}`, name: `Paged ${i}` });
      slugs.push(tenant.slug);
      createdSlugs.push(tenant.slug);
    }
  });

  it('follows next_cursor across pages (limit 2, five matches)', async () => {
    const r = await tenantctl(['tenant', 'list', '--query', prefix, '--limit', '2', '--format', 'json']);
    expect(r).toMatchObject({ code: 0, stderr: '' });
    const body = JSON.parse(r.stdout) as { tenants: Tenant[]; total_count: number };
    expect(body.tenants.map((x) => x.slug)).toEqual(slugs);
    expect(body.total_count).toBe(5);
    // The server really pages at 2: one request alone could not have returned them all.
    const one = await fetch(`${baseUrl}/api/setup/tenants?q=${prefix}&limit=2`, { headers: { Authorization: `Bearer ${tokenFor({ admin: true })}` } });
    const page = (await one.json()) as { tenants: Tenant[]; next_cursor: string | null };
    expectContract('GET', '/api/setup/tenants', one.status, page);
    expect(page.tenants).toHaveLength(2);
    expect(page.next_cursor).not.toBeNull();
  });

  it('prints an aligned table', async () => {
    const r = await tenantctl(['tenant', 'list', '--query', prefix, '--limit', '3']);
    expect(r.code).toBe(0);
    noEscapes(r);
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^SLUG +NAME +STATUS +CREATED +TENANT ID$/);
    expect(lines.slice(1, 6).map((l) => l.split(/ +/)[0])).toEqual(slugs);
    const nameColumn = lines[0]!.indexOf('NAME');
    for (const l of lines.slice(1, 6)) expect(l.slice(nameColumn)).toMatch(/^Paged \d/);
    expect(lines[6]).toBe('5 tenants');
  });
});

describe('tenant audit', () => {
  let clean: string;
  let planted: { slug: string; generation: string };
  beforeAll(async () => {
    clean = (await createTenant({ slug: unique('cli-clean') })).slug;
    createdSlugs.push(clean);
    const bad = await createTenant({ slug: unique('cli-bad') });
    createdSlugs.push(bad.slug);
    const generation = await ownerConnection().transaction(async (trx) => {
      await trx.raw('set local session_replication_role = replica');
      const [g] = await trx('generations').insert({ tenant_id: bad.id, board_id: crypto.randomUUID(), prompt: 'board deleted behind our back' }).returning('id');
      return (g as { id: string }).id;
    });
    planted = { slug: bad.slug, generation };
  });

  it('clean tenant: exit 0, pure JSON on stdout', async () => {
    const r = await tenantctl(['tenant', 'audit', '--tenant', clean, '--format', 'json']);
    expect(r).toMatchObject({ code: 0, stderr: '' });
    const report = JSON.parse(r.stdout) as AuditReport;
    expectContract('GET', '/api/setup/audit', 200, report);
    expect(report.tenants.map((x) => [x.slug, x.violations])).toEqual([[clean, []]]);
    expect(report.total_violations).toBe(0);
  });

  it('clean tenant: exit 0 with a table', async () => {
    const r = await tenantctl(['tenant', 'audit', '--tenant', clean]);
    expect(r.code).toBe(0);
    noEscapes(r);
    expect(r.stdout).toMatch(/^TENANT +USERS +BOARDS +MEMBERS +GENERATIONS +PROVIDERS +CREDIT TXNS +VIOLATIONS$/m);
    expect(r.stdout).toContain('No isolation violations in 1 tenant.');
  });

  it('planted violation: exit 1, reported in JSON with table and row id', async () => {
    const r = await tenantctl(['tenant', 'audit', '--tenant', planted.slug, '--format', 'json']);
    expect(r.code).toBe(1);
    const report = JSON.parse(r.stdout) as AuditReport;
    expectContract('GET', '/api/setup/audit', 200, report);
    expect(report.tenants[0]!.violations).toEqual([
      { check: 'orphaned_record', table: 'generations', row_id: planted.generation, message: expect.stringContaining('does not exist') },
    ]);
    expect(report.total_violations).toBe(1);
  });

  it('planted violation: exit 1, listed in the table', async () => {
    const r = await tenantctl(['tenant', 'audit', '--tenant', planted.slug]);
    expect(r.code).toBe(1);
    const row = r.stdout.split('\n').find((l) => l.includes(planted.generation))!;
    expect(row).toMatch(new RegExp(`^${planted.slug} +orphaned_record +generations +${planted.generation} +generations row`));
    expect(r.stdout).toContain('1 violation found in 1 tenant.');
  });

  it('unknown tenant: the server\'s error on stderr, exit 2', async () => {
    const slug = unique('cli-nobody');
    const r = await tenantctl(['tenant', 'audit', '--tenant', slug, '--format', 'json']);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe(`error: Tenant not found: No tenant has the slug '${slug}'.\n`);
  });
});

describe('tokens', () => {
  it('token mints a verifiable token with the requested claims and lifetime', async () => {
    const sub = unique('cli-sub');
    const r = await tenantctl(['token', '--sub', sub, '--email', `${sub}@example.test`, '--admin', '--ttl', '15m']);
    expect(r).toMatchObject({ code: 0, stderr: '' });
    const token = r.stdout.trim();
    const claims = jwt.decode(token) as Record<string, unknown>;
    expect(claims).toMatchObject({ sub, email: `${sub}@example.test`, roles: ['admin'] });
    expect((claims.exp as number) - (claims.iat as number)).toBe(900);
    // The server accepts it as a platform admin's.
    const list = await tenantctl(['tenant', 'list', '--limit', '1', '--query', 'cli-page', '--format', 'json', '--token', token], { SERVICE_DATA_DIR: '/nonexistent' });
    expect(list.code).toBe(0);
  });

  it('token without a local key says to start the service first (exit 2)', async () => {
    const empty = fs.mkdtempSync(path.join(os.tmpdir(), 'tenantctl-nokey-'));
    const r = await tenantctl(['token', '--sub', 'x'], { SERVICE_DATA_DIR: empty });
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/^error: no local signing key in .*start the service once first/);
  });

  it('no token and no local key: the server\'s 401 with a hint, exit 1', async () => {
    const empty = fs.mkdtempSync(path.join(os.tmpdir(), 'tenantctl-nokey-'));
    const r = await tenantctl(['tenant', 'list'], { SERVICE_DATA_DIR: empty });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^error: Unauthorized: .*\(no token: pass --token or SERVICE_TOKEN/);
  });

  it('a token without the admin role: Forbidden, exit 1', async () => {
    const r = await tenantctl(['tenant', 'list'], { SERVICE_TOKEN: tokenFor() });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^error: Forbidden: /);
  });
});

describe('usage errors and connection failures', () => {
  it.each([
    [['tenant', 'list', '--limit', 'abc'], /--limit must be an integer from 1 to 1000/],
    [['tenant', 'list', '--limit', '1001'], /--limit must be an integer from 1 to 1000/],
    [['tenant', 'create', '--name', 'X', '--slug', 'ok-slug', '--settings', '{bad'], /--settings is not valid JSON/],
    [['tenant', 'create', '--name', 'X', '--slug', 'ok-slug', '--settings', '[1,2]'], /--settings must be a JSON object/],
    [['tenant', 'create', '--name', 'X', '--slug', 'Not_A_Slug'], /--slug must be 1-255 lowercase letters/],
    [['tenant', 'create', '--name', 'X'], /required option '--slug <slug>' not specified/],
    [['tenant', 'audit', '--format', 'yaml'], /Allowed choices are table, json/],
    [['tenant', 'list', '--bogus'], /unknown option '--bogus'/],
    [['token', '--sub', 'x', '--ttl', 'forever'], /--ttl must be a positive duration/],
    [['tenant', 'list', '--url', 'ftp://host'], /--url must be an http\(s\) URL/],
  ])('%j → exit 2 with a clear message', async (args, message) => {
    const r = await tenantctl(args);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(message);
  });

  it.each([[['tenant', 'list']], [['tenant', 'audit', '--format', 'json']], [['tenant', 'create', '--name', 'X', '--slug', 'never-made']]])(
    'unreachable server: %j → exit 2, says so',
    async (args) => {
      const port = await closedPort();
      const r = await tenantctl(args, { SERVICE_URL: `http://127.0.0.1:${port}` });
      expect(r.code).toBe(2);
      expect(r.stdout).toBe('');
      expect(r.stderr).toBe(`error: cannot reach the service at http://127.0.0.1:${port} (ECONNREFUSED); is it running? Set --url or SERVICE_URL.\n`);
    },
  );

  it('without SERVICE_URL, the URL comes from SERVICE_HOST and SERVICE_PORT as the service listens', async () => {
    const port = (server.address() as AddressInfo).port;
    const ok = await tenantctl(['tenant', 'list', '--format', 'json', '--limit', '1'], { SERVICE_URL: undefined, SERVICE_HOST: '127.0.0.1', SERVICE_PORT: String(port) });
    expect(ok.stderr).toBe('');
    expect(ok.code).toBe(0);
    expect(JSON.parse(ok.stdout)).toHaveProperty('tenants');
    // A wildcard bind address is reached on the loopback address.
    const wildcard = await tenantctl(['tenant', 'list', '--limit', '1'], { SERVICE_URL: undefined, SERVICE_HOST: '0.0.0.0', SERVICE_PORT: String(port) });
    expect(wildcard.code).toBe(0);
    const closed = await closedPort();
    const refused = await tenantctl(['tenant', 'list'], { SERVICE_URL: undefined, SERVICE_PORT: String(closed) });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(`cannot reach the service at http://127.0.0.1:${closed} (ECONNREFUSED)`);
    // SERVICE_URL still wins over SERVICE_HOST/SERVICE_PORT.
    const explicit = await tenantctl(['tenant', 'list', '--limit', '1'], { SERVICE_PORT: String(closed) });
    expect(explicit.code).toBe(0);
    const help = await tenantctl(['--help'], { SERVICE_URL: undefined, SERVICE_PORT: '9999' });
    expect(help.stdout).toContain('http://127.0.0.1:9999');
  }, 120_000); // five CLI processes: generous on a busy 2-core machine

  it.each([[[]], [['tenant']], [['tenant', 'create']], [['tenant', 'list']], [['tenant', 'update']], [['tenant', 'audit']], [['token']]])('%j --help → usage, exit 0', async (args) => {
    const r = await tenantctl([...args, '--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(new RegExp(`^Usage: tenantctl${args.length ? ` ${args.join(' ')}` : ''} `));
  });
});
