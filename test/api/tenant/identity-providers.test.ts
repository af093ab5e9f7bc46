/**
 * Identity providers' organizations (docs/identity-providers.md) through the API: each preset's
 * documented token shape signed with a key served over HTTP by a local JWKS server, claims naming
 * several tenants, and identity links (create, update, conflict, unlinked id, another issuer's id,
 * a slug rename, concurrent creates).
 */
import request from 'supertest';
import type { Express } from 'express';
import { IDP_PRESETS, type IdpPreset } from '../../../src/idp-presets';
import { startTestApp, type TestApp } from '../../helpers/app';
import { startJwksServer, type JwksServer } from '../../helpers/jwks-server';
import { adminToken, closeOwnerConnection, ownerConnection, tokenFor, unique } from '../../helpers/factories';

let jwks: JwksServer;
/** Platform admin operations (local provider, local admin token). */
let local: TestApp;
/** The local provider with SERVICE_JWT_TENANT_ID_CLAIM: tokens of another issuer than jwks. */
let localIds: TestApp;
const apps = new Map<IdpPreset, TestApp>();
const admin = () => `Bearer ${adminToken()}`;

beforeAll(async () => {
  jwks = await startJwksServer();
  local = await startTestApp({ SERVICE_MULTI_TENANT_MODE: 'true' });
  localIds = await startTestApp({ SERVICE_MULTI_TENANT_MODE: 'true', SERVICE_JWT_TENANT_ID_CLAIM: 'org_id' });
  for (const preset of Object.keys(IDP_PRESETS) as IdpPreset[]) {
    apps.set(preset, await startTestApp({ SERVICE_MULTI_TENANT_MODE: 'true', SERVICE_JWKS_URI: jwks.jwksUri, SERVICE_IDP_PRESET: preset, SERVICE_ADMIN_ISSUER: jwks.issuer }));
  }
}, 120_000);
afterAll(async () => {
  await Promise.all([local, localIds, ...apps.values()].map((a) => a?.close()));
  await jwks?.close();
  await closeOwnerConnection();
});

async function createTenant(body: Record<string, unknown>): Promise<{ tenant_id: string; slug: string }> {
  const r = await request(local.app).post('/api/setup/tenant').set('Authorization', admin()).send(body);
  expect(r.status).toBe(201);
  return r.body as { tenant_id: string; slug: string };
}

const link = (organization_id: string, issuer = jwks.issuer) => ({ issuer, organization_id });

function current(app: Express, token: string, header?: string) {
  const r = request(app).get('/api/tenant').set('Authorization', `Bearer ${token}`);
  return header === undefined ? r : r.set('X-Tenant', header);
}

describe('presets: each provider’s documented token shape, signed with a key served over HTTP', () => {
  // The sample tokens of docs/identity-providers.md, with its ids.
  const cases: Array<[IdpPreset, string, (id: string, slug: string) => Record<string, unknown>]> = [
    ['keycloak', '3f6c1a2e-7b0d-4c55-9f3e-2a1d8c4b5e60', (id, slug) => ({ organization: { [slug]: { id } } })],
    ['auth0', 'org_9ybsU1dN2dKfDkBi', (id) => ({ org_id: id, org_name: 'acme' })],
    ['clerk', 'org_2abc', (id, slug) => ({ o: { id, slg: slug, rol: 'admin' } })],
    ['workos', 'org_01HXYZ', (id) => ({ org_id: id, role: 'member' })],
    ['entra', '72f988bf-86f1-41af-91ab-2d7cd011db47', (id) => ({ tid: id })],
    ['zitadel', '231848297847848962', (id) => ({ 'urn:zitadel:iam:user:resourceowner:id': id, 'urn:zitadel:iam:user:resourceowner:name': 'ACME' })],
    ['logto', '9l3bf1e2', (id) => ({ organizations: [id] })],
  ];

  it.each(cases)('%s: the linked organization id (%s) resolves its tenant and provisions the caller', async (preset, id, shape) => {
    const t = await createTenant({ name: `${preset} tenant`, slug: unique(preset), identity_links: [link(id)] });
    const sub = unique('u');
    const token = jwks.sign({ sub, iss: jwks.issuer, ...shape(id, t.slug) });
    // Off by default: the token's role (Clerk's rol "admin") is ignored.
    const r = await current(apps.get(preset)!.app, token).expect(200);
    expect(r.body).toMatchObject({ tenant: { slug: t.slug, identity_links: [link(id)] }, source: 'organization_id_claim', membership: { subject: sub, role: 'member' } });
  });

  it.each(cases)('%s: an organization id linked to no tenant is 404 naming it', async (preset, _sample, shape) => {
    const id = unique(`${preset}-unlinked`);
    const r = await current(apps.get(preset)!.app, jwks.sign({ sub: unique('u'), iss: jwks.issuer, ...shape(id, unique('nope')) })).expect(404);
    expect(r.body.error).toBe('Tenant not found');
    expect(r.body.detail).toContain(`'${id}'`);
  });

  it('keycloak: the default array of aliases is a set of names (no ids): one resolves, several need the header', async () => {
    const a = await createTenant({ name: 'KC A', slug: unique('kca') });
    const b = await createTenant({ name: 'KC B', slug: unique('kcb') });
    const app = apps.get('keycloak')!.app;
    const one = await current(app, jwks.sign({ sub: unique('u'), iss: jwks.issuer, organization: [a.slug] })).expect(200);
    expect(one.body).toMatchObject({ tenant: { slug: a.slug }, source: 'custom_claim' });
    const two = jwks.sign({ sub: unique('u'), iss: jwks.issuer, organization: [a.slug, b.slug] });
    const none = await current(app, two).expect(400);
    expect(none.body.error).toBe('Missing X-Tenant header');
    expect((await current(app, two, b.slug).expect(200)).body.tenant.slug).toBe(b.slug);
  });

  it('keycloak: realm_access.roles carries the platform admin role', async () => {
    const t = await createTenant({ name: 'KC admin', slug: unique('kcadm') });
    const token = jwks.sign({ sub: unique('a'), iss: jwks.issuer, realm_access: { roles: ['admin'] } });
    const r = await current(apps.get('keycloak')!.app, token, t.slug).expect(200);
    expect(r.body.membership).toBeUndefined();
  });

  it('setup status reports the preset', async () => {
    const token = jwks.sign({ sub: unique('a'), iss: jwks.issuer, roles: ['admin'] });
    const r = await request(apps.get('entra')!.app).get('/api/setup/status').set('Authorization', `Bearer ${token}`).expect(200);
    expect(r.body.idp_preset).toBe('entra');
    expect(r.body.recommendations.join('\n')).toMatch(/provisions? members from name claims without an identity link, while tokens carry organization ids \(tid\)/);
    const plain = await request(local.app).get('/api/setup/status').set('Authorization', admin()).expect(200);
    expect(plain.body).not.toHaveProperty('idp_preset');
  });
});

describe('several tenants in one claim', () => {
  let a: { slug: string };
  let b: { slug: string };
  beforeAll(async () => {
    a = await createTenant({ name: 'Set A', slug: unique('seta') });
    b = await createTenant({ name: 'Set B', slug: unique('setb') });
  });
  const token = () => tokenFor({ claims: { org: [a.slug, b.slug] } });

  it('no header: 400 saying the header must choose', async () => {
    const r = await current(local.app, token()).expect(400);
    expect(r.body).toMatchObject({ error: 'Missing X-Tenant header', multi_tenant_mode: true });
    expect(r.body.detail).toMatch(/names several tenants.*must choose/);
  });
  it('the header chooses one of them', async () => {
    const r = await current(local.app, token(), b.slug).expect(200);
    expect(r.body).toMatchObject({ tenant: { slug: b.slug }, source: 'organization_claim' });
  });
  it('a header outside the set: 403 saying the token does not list it', async () => {
    const other = await createTenant({ name: 'Set C', slug: unique('setc') });
    const r = await current(local.app, token(), other.slug).expect(403);
    expect(r.body.error).toBe('Access denied');
    expect(r.body.detail).toContain('does not list');
  });
  it("Keycloak's map form is a set of its keys", async () => {
    const map = tokenFor({ claims: { organization: { [a.slug]: { id: 'x1' }, [b.slug]: { id: 'x2' } } } });
    await current(local.app, map).expect(400);
    expect((await current(local.app, map, a.slug).expect(200)).body.tenant.slug).toBe(a.slug);
  });
  it('an object with plain values is one organization', async () => {
    const r = await current(local.app, tokenFor({ claims: { org: { name: 'ignored', slug: a.slug } } })).expect(200);
    expect(r.body.tenant.slug).toBe(a.slug);
  });
});

describe('identity links', () => {
  it('are set on create, returned on reads, replaced on update', async () => {
    const one = link(unique('one'));
    // A repeated pair is one link.
    const t = await createTenant({ name: 'Linked', slug: unique('lnk'), identity_links: [one, one, link(unique('two'))] });
    const got = await request(local.app).get(`/api/setup/tenant/${t.tenant_id}`).set('Authorization', admin()).expect(200);
    expect(got.body.identity_links).toHaveLength(2);
    const next = [link(unique('three'))];
    const put = await request(local.app).put(`/api/setup/tenant/${t.tenant_id}`).set('Authorization', admin()).send({ identity_links: next }).expect(200);
    expect(put.body.identity_links).toEqual(next);
    const list = await request(local.app).get('/api/setup/tenants').query({ q: t.slug }).set('Authorization', admin()).expect(200);
    expect(list.body.tenants[0].identity_links).toEqual(next);
    const cleared = await request(local.app).put(`/api/setup/tenant/${t.tenant_id}`).set('Authorization', admin()).send({ identity_links: [] }).expect(200);
    expect(cleared.body).not.toHaveProperty('identity_links');
    // Each change is an event in the same transaction: created with its links, updated with before/after.
    const events = (await ownerConnection()('events').where({ tenant_id: t.tenant_id }).orderBy('occurred_at').select('action', 'data')) as Array<{ action: string; data: Record<string, unknown> }>;
    expect(events[0]).toMatchObject({ action: 'tenant.created', data: { tenant: { identity_links: expect.arrayContaining([{ issuer: one.issuer, organization_id: one.organization_id }]) } } });
    expect(events.filter((e) => e.action === 'tenant.updated').map((e) => e.data)).toEqual([
      expect.objectContaining({ after: { identity_links: next }, before: { identity_links: expect.any(Array) } }),
      expect.objectContaining({ before: { identity_links: next }, after: { identity_links: [] } }),
    ]);
  });

  it('a pair belongs to one tenant: create and update with a taken pair are 409, and change nothing', async () => {
    const pair = link(unique('taken'));
    await createTenant({ name: 'Holder', slug: unique('hold'), identity_links: [pair] });
    const slug = unique('second');
    const r = await request(local.app).post('/api/setup/tenant').set('Authorization', admin()).send({ name: 'Second', slug, identity_links: [pair] }).expect(409);
    expect(r.body.error).toBe('Conflict');
    expect(r.body.detail).toContain(pair.organization_id);
    expect(await ownerConnection()('tenants').where({ slug }).first()).toBeUndefined();
    const other = await createTenant({ name: 'Other', slug: unique('oth') });
    await request(local.app).put(`/api/setup/tenant/${other.tenant_id}`).set('Authorization', admin()).send({ name: 'Renamed', identity_links: [pair] }).expect(409);
    const after = await request(local.app).get(`/api/setup/tenant/${other.tenant_id}`).set('Authorization', admin()).expect(200);
    expect(after.body).toMatchObject({ name: 'Other' });
    expect(after.body).not.toHaveProperty('identity_links');
  });

  it('two concurrent creates with the same pair: one 201, one 409', async () => {
    const pair = link(unique('race'));
    const send = (slug: string) => request(local.app).post('/api/setup/tenant').set('Authorization', admin()).send({ name: 'Race', slug, identity_links: [pair] });
    const results = await Promise.all([send(unique('ra')), send(unique('rb'))]);
    expect(results.map((r) => r.status).sort()).toEqual([201, 409]);
    expect(await ownerConnection()('identity_links').where({ issuer: pair.issuer, organization_id: pair.organization_id })).toHaveLength(1);
  });

  it('self-service registration cannot set links', async () => {
    const r = await request(local.app)
      .post('/api/tenants/register')
      .set('Authorization', `Bearer ${tokenFor()}`)
      .send({ name: 'Sneaky', slug: unique('snk'), identity_links: [link(unique('snk'))] })
      .expect(400);
    expect(r.body.error).toMatch(/Validation|Bad request/);
  });

  it('the same id from another issuer never matches', async () => {
    const id = unique('shared');
    await createTenant({ name: 'Jwks linked', slug: unique('jl'), identity_links: [link(id)] });
    // localIds verifies local tokens (another issuer) and reads org_id.
    const r = await current(localIds.app, tokenFor({ claims: { org_id: id } })).expect(404);
    expect(r.body.detail).toContain(`'${id}'`);
  });

  it('a link survives a slug rename', async () => {
    const id = unique('ren');
    const t = await createTenant({ name: 'Renamed', slug: unique('before'), identity_links: [link(id)] });
    const token = jwks.sign({ sub: unique('u'), iss: jwks.issuer, org_id: id });
    const app = apps.get('auth0')!.app;
    expect((await current(app, token).expect(200)).body.tenant.slug).toBe(t.slug);
    const renamed = unique('after');
    await request(local.app).put(`/api/setup/tenant/${t.tenant_id}`).set('Authorization', admin()).send({ slug: renamed }).expect(200);
    expect((await current(app, token).expect(200)).body.tenant.slug).toBe(renamed);
  });

  it('a linked id with a header naming another tenant is 403; naming its own tenant is fine', async () => {
    const id = unique('hdr');
    const t = await createTenant({ name: 'Hdr', slug: unique('hdr'), identity_links: [link(id)] });
    const token = jwks.sign({ sub: unique('u'), iss: jwks.issuer, org_id: id });
    const app = apps.get('auth0')!.app;
    await current(app, token, t.slug).expect(200);
    expect((await current(app, token, unique('elsewhere')).expect(403)).body.error).toBe('Access denied');
  });

  it('several linked ids: the header chooses among their tenants; one not linked to them is 403', async () => {
    const [i1, i2] = [unique('m1'), unique('m2')];
    const t1 = await createTenant({ name: 'M1', slug: unique('m1'), identity_links: [link(i1)] });
    await createTenant({ name: 'M2', slug: unique('m2'), identity_links: [link(i2)] });
    const outside = await createTenant({ name: 'M3', slug: unique('m3') });
    const token = jwks.sign({ sub: unique('u'), iss: jwks.issuer, organizations: [i1, i2] });
    const app = apps.get('logto')!.app;
    expect((await current(app, token).expect(400)).body.detail).toMatch(/must choose/);
    expect((await current(app, token, t1.slug).expect(200)).body).toMatchObject({ tenant: { slug: t1.slug }, source: 'organization_id_claim' });
    expect((await current(app, token, outside.slug).expect(403)).body.detail).toContain('does not list');
  });

  it('provisions per membership_policy: invitation-only tenants need a membership', async () => {
    const id = unique('inv');
    await createTenant({ name: 'Invite only', slug: unique('inv'), identity_links: [link(id)], membership_policy: { provision_from_claims: false } });
    const r = await current(apps.get('auth0')!.app, jwks.sign({ sub: unique('u'), iss: jwks.issuer, org_id: id })).expect(403);
    expect(r.body.detail).toContain('invitation only');
  });

  it('a linked tenant never provisions from a name claim, but admits its members by one', async () => {
    const id = unique('nm');
    const t = await createTenant({ name: 'Names', slug: unique('nm'), identity_links: [link(id)] });
    const sub = unique('u');
    // The caller becomes a member through the link...
    await current(apps.get('auth0')!.app, jwks.sign({ sub, iss: jwks.issuer, org_id: id })).expect(200);
    // ...a name claim then selects the tenant for that member, and provisions nobody new.
    await current(apps.get('auth0')!.app, jwks.sign({ sub, iss: jwks.issuer, tenant: t.slug })).expect(200);
    const stranger = await current(apps.get('auth0')!.app, jwks.sign({ sub: unique('u'), iss: jwks.issuer, tenant: t.slug })).expect(403);
    expect(stranger.body.detail).toContain('never through a name claim');
    expect(await ownerConnection()('users').where({ tenant_id: t.tenant_id })).toHaveLength(1);
  });
});

describe('roles from the provider (roles_from_claims)', () => {
  const roleEvents = async (tenantId: string) =>
    (await ownerConnection()('events').where({ tenant_id: tenantId, action: 'member.role_changed' }).orderBy('occurred_at').select('actor_issuer', 'actor_subject', 'data')) as Array<{
      actor_issuer: string;
      actor_subject: string | null;
      data: { before: { role: string }; after: { role: string }; source: string };
    }>;
  const roleOf = async (tenantId: string, subject: string) => ((await ownerConnection()('users').where({ tenant_id: tenantId, subject }).first('role')) as { role: string }).role;
  const clerkToken = (sub: string, id: string, slug: string, rol: string) => jwks.sign({ sub, iss: jwks.issuer, o: { id, slg: slug, rol, per: '' } });

  it('on: the first use takes the token role; promotion and demotion (last admin included) follow it, each a member.role_changed event by the provider', async () => {
    const id = unique('rol');
    const t = await createTenant({ name: 'Roles', slug: unique('rol'), identity_links: [link(id)], membership_policy: { roles_from_claims: true } });
    const got = await request(local.app).get(`/api/setup/tenant/${t.tenant_id}`).set('Authorization', admin()).expect(200);
    expect(got.body.membership_policy).toEqual({ provision_from_claims: true, claims_issuer: null, roles_from_claims: true });
    const app = apps.get('clerk')!.app;
    const sub = unique('u');

    expect((await current(app, clerkToken(sub, id, t.slug, 'admin')).expect(200)).body.membership.role).toBe('admin');
    expect(await roleOf(t.tenant_id, sub)).toBe('admin');
    // The only admin, demoted by the provider: the last-admin rule does not apply.
    expect((await current(app, clerkToken(sub, id, t.slug, 'member')).expect(200)).body.membership.role).toBe('member');
    expect(await roleOf(t.tenant_id, sub)).toBe('member');
    // An admin operation with a member's token is refused; promoted, the same request is allowed.
    await request(app).get('/api/tenant/invitations').set('Authorization', `Bearer ${clerkToken(sub, id, t.slug, 'member')}`).expect(403);
    await request(app).get('/api/tenant/invitations').set('Authorization', `Bearer ${clerkToken(sub, id, t.slug, 'admin')}`).expect(200);
    expect(await roleOf(t.tenant_id, sub)).toBe('admin');
    // The same role again changes nothing.
    await current(app, clerkToken(sub, id, t.slug, 'admin')).expect(200);

    const events = await roleEvents(t.tenant_id);
    expect(events.map((e) => [e.data.before.role, e.data.after.role])).toEqual([
      ['admin', 'member'],
      ['member', 'admin'],
    ]);
    for (const e of events) expect(e).toMatchObject({ actor_issuer: jwks.issuer, actor_subject: null, data: { source: 'roles_from_claims' } });
  });

  it('off (the default): the token role is ignored', async () => {
    const id = unique('off');
    const t = await createTenant({ name: 'No roles', slug: unique('off'), identity_links: [link(id)] });
    const got = await request(local.app).get(`/api/setup/tenant/${t.tenant_id}`).set('Authorization', admin()).expect(200);
    expect(got.body.membership_policy).not.toHaveProperty('roles_from_claims');
    const app = apps.get('clerk')!.app;
    const sub = unique('u');
    expect((await current(app, clerkToken(sub, id, t.slug, 'admin')).expect(200)).body.membership.role).toBe('member');
    await request(app).get('/api/tenant/invitations').set('Authorization', `Bearer ${clerkToken(sub, id, t.slug, 'admin')}`).expect(403);
    expect(await roleOf(t.tenant_id, sub)).toBe('member');
    expect(await roleEvents(t.tenant_id)).toEqual([]);
  });

  it('platform admins turn it on and off with the update', async () => {
    const t = await createTenant({ name: 'Toggle', slug: unique('tog') });
    const on = await request(local.app).put(`/api/setup/tenant/${t.tenant_id}`).set('Authorization', admin()).send({ membership_policy: { roles_from_claims: true } }).expect(200);
    expect(on.body.membership_policy.roles_from_claims).toBe(true);
    const off = await request(local.app).put(`/api/setup/tenant/${t.tenant_id}`).set('Authorization', admin()).send({ membership_policy: { roles_from_claims: false } }).expect(200);
    expect(off.body.membership_policy).not.toHaveProperty('roles_from_claims');
  });
});
