/**
 * tenantctl for identity providers' organizations (docs/identity-providers.md), as users run it
 * (the compiled binary against a listening multi-tenant server on the test database): `token
 * --claim name=<json>` mints any claim shape, `tenant link|unlink` manage identity links and
 * `tenant update --roles-from-claims` the role policy.
 */
import jwt from 'jsonwebtoken';
import request from 'supertest';
import type { Tenant } from '../../generated/types.gen';
import { contractProblem } from '../helpers/contract';
import type { TestApp } from '../helpers/app';
import { startCliServer, type CliServer } from '../helpers/cli';
import { adminToken, closeOwnerConnection, unique } from '../helpers/factories';

let t: TestApp;
let cli: CliServer;
const tenantctl = (args: string[], env: Record<string, string> = {}) => cli.tenantctl(args, env);

beforeAll(async () => {
  cli = await startCliServer({ SERVICE_MULTI_TENANT_MODE: 'true' });
  ({ t } = cli);
}, 180_000);
afterAll(async () => {
  await closeOwnerConnection();
  await cli.close();
});

async function newTenant(): Promise<{ tenant_id: string; slug: string }> {
  const slug = unique('clid');
  const r = await request(t.app).post('/api/setup/tenant').set('Authorization', `Bearer ${adminToken()}`).send({ name: slug, slug }).expect(201);
  return r.body as { tenant_id: string; slug: string };
}

describe('token --claim', () => {
  it('mints any claim shape: arrays, maps, objects; a value that is not JSON is a string', async () => {
    const r = await tenantctl(['token', '--sub', 'kc', '--claim', 'organization={"acme":{"id":"k1"}}', '--claim', 'org=["acme","globex"]', '--claim', 'o={"id":"org_1","rol":"admin"}', '--claim', 'tid=plain-text']);
    expect(r).toMatchObject({ code: 0, stderr: '' });
    expect(jwt.decode(r.stdout.trim())).toMatchObject({
      sub: 'kc',
      organization: { acme: { id: 'k1' } },
      org: ['acme', 'globex'],
      o: { id: 'org_1', rol: 'admin' },
      tid: 'plain-text',
    });
  });

  it('a token naming several tenants needs X-Tenant to choose', async () => {
    const [a, b] = [await newTenant(), await newTenant()];
    const token = (await tenantctl(['token', '--sub', unique('u'), '--claim', `org=["${a.slug}","${b.slug}"]`])).stdout.trim();
    await request(t.app).get('/api/tenant').set('Authorization', `Bearer ${token}`).expect(400);
    const r = await request(t.app).get('/api/tenant').set('Authorization', `Bearer ${token}`).set('X-Tenant', b.slug).expect(200);
    expect(r.body.tenant.slug).toBe(b.slug);
  });

  it.each([
    [['token', '--sub', 'x', '--claim', 'no-equals-sign'], /--claim must be name=<json>/],
    [['token', '--sub', 'x', '--claim', '=1'], /--claim must be name=<json>/],
    [['token', '--sub', 'x', '--claim', 'sub=other'], /--claim cannot set 'sub'/],
    [['token', '--sub', 'x', '--claim', 'iss="https://evil.example"'], /--claim cannot set 'iss'/],
  ])('%j → exit 2 with a clear message', async (args, message) => {
    const r = await tenantctl(args);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(message);
  });
});

describe('tenant link|unlink', () => {
  it('links and unlinks organizations; the tenant keeps its other links', async () => {
    const tn = await newTenant();
    const iss = 'https://idp.example.com/realms/acme';
    const [id1, id2] = [unique('org'), unique('org')];
    const one = await tenantctl(['tenant', 'link', tn.slug, '--issuer', iss, '--organization-id', id1, '--format', 'json']);
    expect(one).toMatchObject({ code: 0, stderr: '' });
    const body = JSON.parse(one.stdout) as Tenant;
    expect(contractProblem('PUT', `/api/setup/tenant/${tn.tenant_id}`, { status: 200, headers: { 'content-type': 'application/json' }, body })).toBeNull();
    expect(body.identity_links).toEqual([{ issuer: iss, organization_id: id1 }]);

    const two = await tenantctl(['tenant', 'link', tn.tenant_id, '--issuer', iss, '--organization-id', id2]);
    expect(two.code).toBe(0);
    expect(two.stdout).toContain(`linked to organization '${id2}'`);
    expect(two.stdout).toContain(id1);

    const un = await tenantctl(['tenant', 'unlink', tn.slug, '--issuer', iss, '--organization-id', id1, '--format', 'json']);
    expect((JSON.parse(un.stdout) as Tenant).identity_links).toEqual([{ issuer: iss, organization_id: id2 }]);
    const again = await tenantctl(['tenant', 'unlink', tn.slug, '--issuer', iss, '--organization-id', id1]);
    expect(again.code).toBe(2);
    expect(again.stderr).toContain(`has no link to organization '${id1}'`);
  });

  it("an organization linked to another tenant: the server's 409, exit 1", async () => {
    const [a, b] = [await newTenant(), await newTenant()];
    const id = unique('org');
    expect((await tenantctl(['tenant', 'link', a.slug, '--issuer', 'https://idp.example', '--organization-id', id])).code).toBe(0);
    const r = await tenantctl(['tenant', 'link', b.slug, '--issuer', 'https://idp.example', '--organization-id', id]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/Conflict/);
  });

  it('update --roles-from-claims turns the role policy on and off', async () => {
    const tn = await newTenant();
    const on = await tenantctl(['tenant', 'update', tn.slug, '--roles-from-claims', 'true', '--format', 'json']);
    expect((JSON.parse(on.stdout) as Tenant).membership_policy.roles_from_claims).toBe(true);
    const off = await tenantctl(['tenant', 'update', tn.slug, '--roles-from-claims', 'false']);
    expect(off.stdout).toMatch(/roles_from_claims\s+false/);
  });
});
