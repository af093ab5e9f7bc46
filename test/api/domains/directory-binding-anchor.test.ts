/**
 * Directory binding is anchored (docs/directory-sync.md#directory-users-are-members,
 * docs/domains.md#directory-binding): with SERVICE_JWT_ISSUER unset and one JWKS signing for two
 * issuers, a SCIM-managed tenant that trusts no issuer binds nobody by another issuer's verified
 * email or external id — neither a stranger nor a member who was there first — while the real
 * person gets in once the tenant trusts their issuer, or by a verified domain of the tenant
 * (by verified email only).
 */
import request from 'supertest';
import { startTestApp, type TestApp } from '../../helpers/app';
import { closeOwnerConnection, createUser, ownerConnection, unique } from '../../helpers/factories';
import { startJwksServer, type JwksServer } from '../../helpers/jwks-server';

const REAL = 'https://login.real.example';
const FOREIGN = 'https://login.foreign.example';
let t: TestApp;
let jwks: JwksServer;
beforeAll(async () => {
  jwks = await startJwksServer();
  t = await startTestApp({ SERVICE_MULTI_TENANT_MODE: 'true', SERVICE_JWKS_URI: jwks.jwksUri, SERVICE_JWT_ISSUER: undefined, SERVICE_ADMIN_ISSUER: REAL });
});
afterAll(async () => {
  await t.close();
  await jwks.close();
  await closeOwnerConnection();
});

const admin = () => `Bearer ${jwks.sign({ sub: unique('op'), iss: REAL, roles: ['admin'] })}`;
const token = (iss: string, claims: Record<string, unknown>, sub = unique('p')) => `Bearer ${jwks.sign({ sub, iss, ...claims })}`;

/** A SCIM-managed tenant with neither claims_issuer nor an identity link; its admin group maps to `admin`; external_id_claim `oid`. */
async function directory() {
  const slug = unique('anchor');
  const r = await request(t.app).post('/api/setup/tenant').set('Authorization', admin()).send({ name: slug, slug }).expect(201);
  const id = r.body.tenant_id as string;
  const a = await createUser(id, { role: 'admin', issuer: REAL });
  const adminAuth = token(REAL, { tenant: slug }, a.subject);
  const made = await request(t.app).post('/api/tenant/scim/tokens').set('Authorization', adminAuth).send({}).expect(201);
  const scim = `Bearer ${made.body.token}`;
  await request(t.app).put('/api/tenant/scim').set('Authorization', adminAuth).send({ external_id_claim: 'oid', group_roles: [{ group: 'Admins', role: 'admin' }] }).expect(200);
  const domain = `${unique('corp')}.example`;
  const email = `boss@${domain}`;
  const oid = unique('oid');
  const du = await request(t.app).post('/scim/v2/Users').set('Authorization', scim).send({ userName: email, externalId: oid, emails: [{ value: email, primary: true }], active: true }).expect(201);
  await request(t.app).post('/scim/v2/Groups').set('Authorization', scim).send({ displayName: 'Admins', members: [{ value: du.body.id }] }).expect(201);
  return { id, slug, adminAuth, email, oid, domain, duId: du.body.id as string };
}

const decision = (auth: string) => request(t.app).get('/api/tenant/decision').set('Authorization', auth);
const boundTo = async (duId: string) => (await ownerConnection()('directory_users').where({ id: duId }).first('user_id')).user_id as string | null;

it("another issuer's token with the directory user's verified email, or their oid, is not bound; the real person still gets in", async () => {
  const d = await directory();
  const byEmail = await decision(token(FOREIGN, { tenant: d.slug, email: d.email, email_verified: true })).expect(403);
  expect(byEmail.body.error).toBe('Access denied');
  await decision(token(FOREIGN, { tenant: d.slug, oid: d.oid })).expect(403);
  // Not even from the real issuer while the tenant trusts no issuer of its own and none is pinned.
  await decision(token(REAL, { tenant: d.slug, email: d.email, email_verified: true })).expect(403);
  expect(await boundTo(d.duId)).toBeNull();

  // The tenant trusts its provider: the real person is bound (admin by the directory's group), the foreign token still not.
  await request(t.app).put(`/api/setup/tenant/${d.id}`).set('Authorization', admin()).send({ membership_policy: { claims_issuer: REAL } }).expect(200);
  await decision(token(FOREIGN, { tenant: d.slug, email: d.email, email_verified: true })).expect(403);
  const real = await decision(token(REAL, { tenant: d.slug, email: d.email, email_verified: true })).expect(200);
  expect(real.headers['x-tenant-role']).toBe('admin');
  expect(await boundTo(d.duId)).toBe(real.body.user_id);
});

it('a member who was there first, from another issuer, is not bound to the directory user their verified email names', async () => {
  const d = await directory();
  const sub = unique('early');
  await createUser(d.id, { subject: sub, issuer: FOREIGN, role: 'member', email: d.email });
  const r = await decision(token(FOREIGN, { tenant: d.slug, email: d.email, email_verified: true }, sub)).expect(200);
  expect(r.headers['x-tenant-role']).toBe('member');
  expect(await boundTo(d.duId)).toBeNull();
});

it("a verified domain of the tenant binds by verified email (any accepted issuer), never by another issuer's oid", async () => {
  const d = await directory();
  await request(t.app).post(`/api/setup/tenant/${d.id}/domains`).set('Authorization', admin()).send({ domain: d.domain, verified: true }).expect(201);
  await decision(token(FOREIGN, { tenant: d.slug, oid: d.oid })).expect(403);
  expect(await boundTo(d.duId)).toBeNull();
  const r = await decision(token(REAL, { tenant: d.slug, email: d.email, email_verified: true })).expect(200);
  expect(r.headers['x-tenant-role']).toBe('admin');
});
