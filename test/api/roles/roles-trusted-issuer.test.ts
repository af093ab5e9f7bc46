/**
 * Whose role claim counts (docs/security.md#roles-from-the-identity-provider), with tokens of
 * two issuers signed by one key set served over HTTP (as Entra ID's directories share one JWKS):
 * a member invited in from another identity provider cannot make himself tenant admin with that
 * provider's token, nor can a name claim on a linked tenant, nor a role claim beside several
 * organizations. The tenant's own issuer still sets roles.
 */
import request from 'supertest';
import { startTestApp, type TestApp } from '../../helpers/app';
import { startJwksServer, type JwksServer } from '../../helpers/jwks-server';
import { adminToken, closeOwnerConnection, ownerConnection, unique } from '../../helpers/factories';

let jwks: JwksServer;
/** Platform admin operations (local provider). */
let local: TestApp;
/** Tokens of issuers A and B (one JWKS), the role in `tenant_role`, organization ids in `org_id`. */
let app: TestApp;
let A: string;
let B: string;

beforeAll(async () => {
  jwks = await startJwksServer();
  A = `${jwks.issuer}/a`;
  B = `${jwks.issuer}/b`;
  local = await startTestApp({ SERVICE_MULTI_TENANT_MODE: 'true' });
  app = await startTestApp({
    SERVICE_MULTI_TENANT_MODE: 'true',
    SERVICE_JWKS_URI: jwks.jwksUri,
    SERVICE_JWT_TENANT_ROLE_CLAIM: 'tenant_role',
    SERVICE_JWT_TENANT_ID_CLAIM: 'org_id',
  });
}, 60_000);
afterAll(async () => {
  await Promise.all([local?.close(), app?.close()]);
  await jwks?.close();
  await closeOwnerConnection();
});

async function createTenant(body: Record<string, unknown>): Promise<{ tenant_id: string; slug: string }> {
  const slug = unique('trust');
  const r = await request(local.app).post('/api/setup/tenant').set('Authorization', `Bearer ${adminToken()}`).send({ name: slug, slug, ...body });
  expect(r.status).toBe(201);
  return r.body as { tenant_id: string; slug: string };
}

const current = (token: string, header?: string) => {
  const r = request(app.app).get('/api/tenant').set('Authorization', `Bearer ${token}`);
  return header === undefined ? r : r.set('X-Tenant', header);
};
const roleOf = async (tenantId: string, subject: string) => ((await ownerConnection()('users').where({ tenant_id: tenantId, subject }).first('role')) as { role: string } | undefined)?.role;
const roleEvents = async (tenantId: string) => ownerConnection()('events').where({ tenant_id: tenantId, action: 'member.role_changed' }).select('actor_issuer');

/** A member of `tenantSlug` from issuer B, brought in by invitation from the tenant's admin. */
async function invitedContractor(tenantSlug: string, adminAuth: string): Promise<string> {
  const sub = unique('contractor');
  const email = `${sub}@contractor.test`;
  const inv = await request(app.app).post('/api/tenant/invitations').set('Authorization', adminAuth).set('X-Tenant', tenantSlug).send({ email, role: 'member' }).expect(201);
  const accepted = await request(app.app)
    .post('/api/invitations/accept')
    .set('Authorization', `Bearer ${jwks.sign({ sub, iss: B, email, email_verified: true })}`)
    .send({ token: inv.body.token });
  expect(accepted.status).toBe(200);
  return sub;
}

describe('roles_from_claims with claims_issuer A', () => {
  it("a contractor of issuer B stays member whatever B's token says; A's token still sets roles", async () => {
    const t = await createTenant({ membership_policy: { provision_from_claims: true, claims_issuer: A, roles_from_claims: true } });
    const owner = unique('owner');
    const ownerToken = jwks.sign({ sub: owner, iss: A, tenant: t.slug, tenant_role: 'admin' });
    // The trusted issuer provisions its admin with the token role.
    expect((await current(ownerToken).expect(200)).body.membership.role).toBe('admin');
    const sub = await invitedContractor(t.slug, `Bearer ${ownerToken}`);

    const escalation = jwks.sign({ sub, iss: B, tenant: t.slug, tenant_role: 'admin' });
    expect((await current(escalation).expect(200)).body.membership.role).toBe('member');
    await request(app.app).get('/api/tenant/invitations').set('Authorization', `Bearer ${escalation}`).expect(403);
    expect(await roleOf(t.tenant_id, sub)).toBe('member');
    expect(await roleEvents(t.tenant_id)).toEqual([]);

    // The owner's own provider demotes and promotes as before.
    expect((await current(jwks.sign({ sub: owner, iss: A, tenant: t.slug, tenant_role: 'member' })).expect(200)).body.membership.role).toBe('member');
    expect(await roleEvents(t.tenant_id)).toEqual([{ actor_issuer: A }]);
  });

  it('a role claim beside several organizations changes no role, whichever X-Tenant chose', async () => {
    const t = await createTenant({ membership_policy: { provision_from_claims: true, claims_issuer: null, roles_from_claims: true } });
    const other = await createTenant({});
    const sub = unique('multi');
    expect((await current(jwks.sign({ sub, iss: A, tenant: t.slug })).expect(200)).body.membership.role).toBe('member');
    const both = jwks.sign({ sub, iss: A, org: [other.slug, t.slug], tenant_role: 'admin' });
    expect((await current(both, t.slug).expect(200)).body.membership.role).toBe('member');
    expect(await roleOf(t.tenant_id, sub)).toBe('member');
    expect(await roleEvents(t.tenant_id)).toEqual([]);
  });

  it('claims_issuer null (and no link): roles follow any accepted issuer, as provisioning does', async () => {
    const t = await createTenant({ membership_policy: { provision_from_claims: true, claims_issuer: null, roles_from_claims: true } });
    const sub = unique('any');
    expect((await current(jwks.sign({ sub, iss: B, tenant: t.slug, tenant_role: 'admin' })).expect(200)).body.membership.role).toBe('admin');
  });
});

describe('roles_from_claims on a linked tenant', () => {
  it("a name claim (even from the link's issuer) sets no role; the linked id from the link's issuer does", async () => {
    const orgId = unique('org');
    const t = await createTenant({ identity_links: [{ issuer: A, organization_id: orgId }], membership_policy: { provision_from_claims: true, roles_from_claims: true } });
    const owner = unique('owner');
    const ownerToken = jwks.sign({ sub: owner, iss: A, org_id: orgId, tenant_role: 'admin' });
    expect((await current(ownerToken).expect(200)).body.membership.role).toBe('admin');
    const sub = await invitedContractor(t.slug, `Bearer ${ownerToken}`);

    expect((await current(jwks.sign({ sub, iss: B, tenant: t.slug, tenant_role: 'admin' })).expect(200)).body.membership.role).toBe('member');
    expect(await roleOf(t.tenant_id, sub)).toBe('member');
    // The owner's name-claim token does not demote either: only the linked id speaks for the role.
    expect((await current(jwks.sign({ sub: owner, iss: A, tenant: t.slug, tenant_role: 'member' })).expect(200)).body.membership.role).toBe('admin');
    expect(await roleEvents(t.tenant_id)).toEqual([]);
  });
});
