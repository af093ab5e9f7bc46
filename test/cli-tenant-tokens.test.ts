/**
 * `tenantctl tenant token` and `tenantctl keys rotate`, as users run them: the compiled binary
 * against a listening server on the test database. The tenant token it prints verifies with jose
 * against the served JWKS; JSON output is checked against the contract.
 */
import { spawn } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import request from 'supertest';
import type { KeyRotation, TenantToken } from '../generated/types.gen';
import { contractProblem } from './helpers/contract';
import { startTestApp, TEST_DATA_DIR, type TestApp } from './helpers/app';
import { buildOnce } from './helpers/server-process';
import { closeOwnerConnection, createTenant, tenantWithMember, tokenFor } from './factories';

const ROOT = path.resolve(__dirname, '..');
const CLI = path.join(ROOT, 'dist', 'src', 'cli', 'main.js');

let t: TestApp;
let server: http.Server;
let baseUrl: string;

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the binary with exactly these variables (plus PATH/HOME). */
function tenantctl(args: string[], env: Record<string, string> = {}): Promise<Run> {
  const merged = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp', SERVICE_URL: baseUrl, SERVICE_DATA_DIR: TEST_DATA_DIR, ...env };
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, [CLI, ...args], { cwd: ROOT, env: merged, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    proc.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
    proc.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
    proc.on('error', reject);
    proc.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

beforeAll(async () => {
  await buildOnce();
  t = await startTestApp({ SERVICE_MULTI_TENANT_MODE: 'true' });
  server = http.createServer(t.app);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}, 180_000);

afterAll(async () => {
  await closeOwnerConnection();
  await new Promise<void>((r) => server.close(() => r()));
  await t.close();
});

describe('tenantctl tenant token', () => {
  it("prints the member's tenant token, which verifies against the served JWKS", async () => {
    const { tenant, user, token } = await tenantWithMember('member');
    const r = await tenantctl(['tenant', 'token', '--tenant', tenant.slug], { SERVICE_TOKEN: token });
    expect(r).toMatchObject({ code: 0, stderr: '' });
    expect(r.stdout).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+\n$/);
    const { payload } = await jwtVerify(r.stdout.trim(), createRemoteJWKSet(new URL(`${baseUrl}/.well-known/jwks.json`)), {
      issuer: t.config.tenantTokenIssuer,
      audience: t.config.tenantTokenAudience,
      typ: 'at+jwt',
    });
    expect(payload).toMatchObject({ sub: user.subject, tenant_id: tenant.id, tenant_slug: tenant.slug, tenant_role: 'member', user_id: user.id });
  });

  it('prints the whole answer as JSON, and takes the tenant from the token when --tenant is left out', async () => {
    const { tenant, user } = await tenantWithMember('admin');
    const r = await tenantctl(['tenant', 'token', '--format', 'json'], { SERVICE_TOKEN: tokenFor({ sub: user.subject, tenant: tenant.slug }) });
    expect(r.code).toBe(0);
    const body = JSON.parse(r.stdout) as TenantToken;
    expect(contractProblem('POST', '/api/tenant/token', { status: 200, headers: { 'content-type': 'application/json' }, body })).toBeNull();
    expect(body).toMatchObject({ token_type: 'Bearer', tenant_id: tenant.id, role: 'admin', expires_in: 300 });
  });

  it("a non-member is refused with the server's error and exit 1; the minted admin token gets a hint", async () => {
    const tenant = await createTenant();
    const stranger = await tenantctl(['tenant', 'token', '--tenant', tenant.slug], { SERVICE_TOKEN: tokenFor() });
    expect(stranger).toMatchObject({ code: 1, stdout: '' });
    expect(stranger.stderr).toMatch(/^error: Access denied: /);
    const minted = await tenantctl(['tenant', 'token', '--tenant', tenant.slug]);
    expect(minted).toMatchObject({ code: 1, stdout: '' });
    expect(minted.stderr).toMatch(/members only.*pass the member's token with --token or SERVICE_TOKEN/);
    const bad = await tenantctl(['tenant', 'token', '--tenant', 'Not A Slug']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--tenant must be a slug/);
  });
});

describe('tenantctl keys rotate', () => {
  it('rotates with the minted admin token: the next key is published before it signs', async () => {
    const r = await tenantctl(['keys', 'rotate', '--format', 'json']);
    expect(r).toMatchObject({ code: 0, stderr: '' });
    const body = JSON.parse(r.stdout) as KeyRotation;
    expect(contractProblem('POST', '/api/setup/tenant-token-keys/rotate', { status: 200, headers: { 'content-type': 'application/json' }, body })).toBeNull();
    expect(Date.parse(body.signs_from)).toBeGreaterThan(Date.now());
    const jwks = await request(t.app).get('/.well-known/jwks.json').expect(200);
    expect(jwks.body.keys.map((k: { kid: string }) => k.kid)).toEqual(expect.arrayContaining([body.kid, body.previous_kid]));

    const text = await tenantctl(['keys', 'rotate']);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/^Tenant-token key rotated\.\n/);
    expect(text.stdout).toMatch(/^previous_kid {14}\S+$/m);
    expect(text.stdout).toContain(body.kid); // the previous key of this rotation
  });

  it("a member's token is refused (403, exit 1)", async () => {
    const r = await tenantctl(['keys', 'rotate'], { SERVICE_TOKEN: tokenFor() });
    expect(r).toMatchObject({ code: 1, stdout: '' });
    expect(r.stderr).toMatch(/^error: Forbidden: Only platform admins.*\(the token must carry the platform admin role\)\n$/);
  });
});
