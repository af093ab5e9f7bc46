/**
 * `tenantctl tenant token` and `tenantctl keys rotate`, as users run them: the compiled binary
 * against a listening server on the test database. The tenant token it prints verifies with jose
 * against the served JWKS; JSON output is checked against the contract.
 */
import { createRemoteJWKSet, jwtVerify } from 'jose';
import request from 'supertest';
import type { KeyRotation, TenantToken } from '../../generated/types.gen';
import { contractProblem } from '../helpers/contract';
import type { TestApp } from '../helpers/app';
import { startCliServer, type CliServer } from '../helpers/cli';
import { closeOwnerConnection, createTenant, tenantWithMember, tokenFor } from '../helpers/factories';

let t: TestApp;
let cli: CliServer;
let baseUrl: string;
const tenantctl = (args: string[], env: Record<string, string> = {}) => cli.tenantctl(args, env);

beforeAll(async () => {
  cli = await startCliServer({ SERVICE_MULTI_TENANT_MODE: 'true' });
  ({ t, baseUrl } = cli);
}, 180_000);
afterAll(async () => {
  await closeOwnerConnection();
  await cli.close();
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
