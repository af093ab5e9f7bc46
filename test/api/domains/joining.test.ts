/**
 * Joining by a verified domain and resolution by it (docs/domains.md#joining-by-domain,
 * docs/domains.md#resolution): the join role's limits, automatic join at the first request
 * naming the tenant, suggest (joinable, join), and never on an unverified, lapsed or merely
 * claimed domain, after a removal, or on a directory-managed tenant. The re-check lapses a
 * domain after three misses, each check on exactly one caller of it.
 */
import request from 'supertest';
import { txtLookup } from '../../../src/domain/domains/dns';
import { runDomainChecks } from '../../../src/domain/domains/recheck';
import { startTestApp, type TestApp } from '../../helpers/app';
import { startDnsServer, type DnsServer } from '../../helpers/dns-server';
import { adminToken, closeOwnerConnection, createUser, ownerConnection, tokenFor, unique } from '../../helpers/factories';

let t: TestApp;
let dns: DnsServer;
const admin = () => `Bearer ${adminToken()}`;
beforeAll(async () => {
  dns = await startDnsServer();
  t = await startTestApp({ SERVICE_MULTI_TENANT_MODE: 'true', SERVICE_DNS_SERVERS: dns.address });
});
afterAll(async () => {
  await t.close();
  await dns.close();
  await closeOwnerConnection();
});

async function tenantAdmin(slug = unique('join')): Promise<{ id: string; slug: string; auth: string }> {
  const r = await request(t.app).post('/api/setup/tenant').set('Authorization', admin()).send({ name: slug, slug }).expect(201);
  const a = await createUser(r.body.tenant_id, { role: 'admin' });
  return { id: r.body.tenant_id, slug, auth: `Bearer ${tokenFor({ sub: a.subject, claims: { tenant: slug } })}` };
}

/** A tenant with `domain` verified (by a platform admin) and its join policy set. */
async function verifiedTenant(domain: string, join: 'none' | 'suggest' | 'automatic', joinRole = 'member') {
  const a = await tenantAdmin();
  await request(t.app).post(`/api/setup/tenant/${a.id}/domains`).set('Authorization', admin()).send({ domain, verified: true }).expect(201);
  await request(t.app).patch(`/api/tenant/domains/${domain}`).set('Authorization', a.auth).send({ join, join_role: joinRole }).expect(200);
  return a;
}

const person = (email: string, claims: Record<string, unknown> = {}) => `Bearer ${tokenFor({ sub: unique('p'), claims: { email, email_verified: true, ...claims } })}`;
const zone = () => `${unique('z')}.example`;
const members = (tenantId: string) => ownerConnection()('users').where({ tenant_id: tenantId });

describe('the join role', () => {
  it("is never admin nor a role holding a 'tenant:' permission, and must exist", async () => {
    const a = await tenantAdmin();
    const domain = zone();
    await request(t.app).post('/api/tenant/domains').set('Authorization', a.auth).send({ domain }).expect(201);
    const set = (body: object) => request(t.app).patch(`/api/tenant/domains/${domain}`).set('Authorization', a.auth).send(body);
    expect((await set({ join: 'automatic', join_role: 'admin' }).expect(400)).body.detail).toContain("'admin' is never given by a domain");
    await set({ join_role: 'no-such-role' }).expect(400);
    const key = 'tenant:members:write';
    const role = unique('helpdesk');
    await request(t.app).post('/api/tenant/roles').set('Authorization', a.auth).send({ key: role, name: role, permissions: [key] }).expect(201);
    expect((await set({ join: 'suggest', join_role: role }).expect(400)).body.detail).toContain(key);
    const ok = await set({ join: 'automatic' }).expect(200);
    expect(ok.body).toMatchObject({ join: 'automatic', join_role: 'member' });
    const ev = await ownerConnection()('events').where({ tenant_id: a.id, action: 'domain.updated' }).first('data');
    expect(ev.data.after).toEqual({ join: 'automatic', join_role: 'member' });
  });
});

describe('automatic join', () => {
  it('a verified email at the domain or a subdomain becomes a member with the join role at its first request; the event says by which domain', async () => {
    const domain = zone();
    const role = unique('viewer');
    const a = await tenantAdmin();
    await request(t.app).post('/api/tenant/roles').set('Authorization', a.auth).send({ key: role, name: role, permissions: [] }).expect(201);
    await request(t.app).post(`/api/setup/tenant/${a.id}/domains`).set('Authorization', admin()).send({ domain, verified: true }).expect(201);
    await request(t.app).patch(`/api/tenant/domains/${domain}`).set('Authorization', a.auth).send({ join: 'automatic', join_role: role }).expect(200);
    const r = await request(t.app).get('/api/tenant').set('Authorization', person(`carol@eu.${domain}`)).set('X-Tenant', a.slug).expect(200);
    expect(r.body.membership.role).toBe(role);
    const ev = await ownerConnection()('events').where({ tenant_id: a.id, action: 'member.joined_by_domain' }).first('data');
    expect(ev.data).toMatchObject({ domain, join: 'automatic' });
  });

  it('not with an unverified email, at another domain, at a look-alike, or on a merely claimed domain', async () => {
    const domain = zone();
    const a = await verifiedTenant(domain, 'automatic');
    const get = (auth: string) => request(t.app).get('/api/tenant').set('Authorization', auth).set('X-Tenant', a.slug);
    await get(person(`dan@${domain}`, { email_verified: false })).expect(403);
    await get(person(`dan@${domain}.evil.test`)).expect(403);
    await get(person(`dan@x${domain}`)).expect(403);
    const claimedOnly = zone();
    await request(t.app).post('/api/tenant/domains').set('Authorization', a.auth).send({ domain: claimedOnly }).expect(201);
    await request(t.app).patch(`/api/tenant/domains/${claimedOnly}`).set('Authorization', a.auth).send({ join: 'automatic' }).expect(200);
    await get(person(`dan@${claimedOnly}`)).expect(403);
    expect(await members(a.id)).toHaveLength(1);
  });

  it('a removal sticks; a directory-managed tenant is the directory\'s; a lapsed domain admits nobody', async () => {
    const domain = zone();
    const a = await verifiedTenant(domain, 'automatic');
    const sub = unique('p');
    const auth = `Bearer ${tokenFor({ sub, claims: { email: `erin@${domain}`, email_verified: true } })}`;
    const joined = await request(t.app).get('/api/tenant').set('Authorization', auth).set('X-Tenant', a.slug).expect(200);
    const userId = joined.body.membership.user_id;
    await request(t.app).delete(`/api/tenant/members/${userId}`).set('Authorization', a.auth).expect((res) => expect([200, 204]).toContain(res.status));
    await request(t.app).get('/api/tenant').set('Authorization', auth).set('X-Tenant', a.slug).expect(403);

    await request(t.app).post('/api/tenant/scim/tokens').set('Authorization', a.auth).send({}).expect(201);
    await request(t.app).get('/api/tenant').set('Authorization', person(`fay@${domain}`)).set('X-Tenant', a.slug).expect(403);

    const b = await verifiedTenant(zone(), 'automatic');
    const bDomain = (await ownerConnection()('tenant_domains').where({ tenant_id: b.id }).first('domain')).domain as string;
    await ownerConnection()('tenant_domains').where({ tenant_id: b.id }).update({ status: 'lapsed' });
    await request(t.app).get('/api/tenant').set('Authorization', person(`gus@${bDomain}`)).set('X-Tenant', b.slug).expect(403);
  });
});

describe('suggest: joinable and join', () => {
  it('lists the tenant for a verified email at the domain; join makes a member with the join role; once', async () => {
    const domain = zone();
    const a = await verifiedTenant(domain, 'suggest');
    const auth = person(`hal@${domain}`);
    const list = await request(t.app).get('/api/tenants/joinable').set('Authorization', auth).expect(200);
    expect(list.body.tenants).toEqual([{ tenant_id: a.id, slug: a.slug, name: a.slug, domain, join: 'suggest', join_role: 'member' }]);
    // Suggest does not join by itself.
    await request(t.app).get('/api/tenant').set('Authorization', auth).set('X-Tenant', a.slug).expect(403);
    const j = await request(t.app).post(`/api/tenants/${a.id}/join`).set('Authorization', auth).expect(201);
    expect(j.body).toMatchObject({ tenant_id: a.id, slug: a.slug, role: 'member', domain });
    await request(t.app).post(`/api/tenants/${a.id}/join`).set('Authorization', auth).expect(409);
    expect((await request(t.app).get('/api/tenants/joinable').set('Authorization', auth).expect(200)).body.tenants).toEqual([]);
    await request(t.app).get('/api/tenant').set('Authorization', auth).set('X-Tenant', a.slug).expect(200);
    const ev = await ownerConnection()('events').where({ tenant_id: a.id, action: 'member.joined_by_domain' }).first('data');
    expect(ev.data.domain).toBe(domain);
  });

  it('nothing for an unverified email, a tenant with join none, or another domain; join refused with 403', async () => {
    const domain = zone();
    const a = await verifiedTenant(domain, 'none');
    expect((await request(t.app).get('/api/tenants/joinable').set('Authorization', person(`ian@${domain}`)).expect(200)).body.tenants).toEqual([]);
    await request(t.app).post(`/api/tenants/${a.id}/join`).set('Authorization', person(`ian@${domain}`)).expect(403);
    const b = await verifiedTenant(zone(), 'suggest');
    await request(t.app).post(`/api/tenants/${b.id}/join`).set('Authorization', person(`ian@${domain}`)).expect(403);
    await request(t.app).post(`/api/tenants/${b.id}/join`).set('Authorization', person(`ian@${domain}`, { email_verified: false })).expect(403);
    await request(t.app).post('/api/tenants/00000000-0000-4000-8000-000000000000/join').set('Authorization', person(`ian@${domain}`)).expect(404);
    await request(t.app).post('/api/tenants/not-a-uuid/join').set('Authorization', person(`ian@${domain}`)).expect(400);
  });
});

describe('resolution by the email domain', () => {
  it('the tenant that verified the domain (longest suffix) wins over a look-alike slug', async () => {
    const label = unique('acme');
    const domain = `${label}.example`;
    // A tenant whose slug the slug rule would pick for this email.
    await tenantAdmin(label);
    const owner = await verifiedTenant(domain, 'automatic');
    const r = await request(t.app).get('/api/tenant').set('Authorization', person(`kim@${domain}`)).expect(200);
    expect(r.body.tenant.slug).toBe(owner.slug);
    // A subdomain verified by a third tenant wins for its addresses.
    const eu = await verifiedTenant(`eu.${domain}`, 'automatic');
    const s = await request(t.app).get('/api/tenant').set('Authorization', person(`lee@eu.${domain}`)).expect(200);
    expect(s.body.tenant.slug).toBe(eu.slug);
  });
});

describe('the daily re-check', () => {
  it('three misses in a row lapse the domain (event), a found record resets them; each due check runs once', async () => {
    const a = await tenantAdmin();
    const domain = zone();
    const c = await request(t.app).post('/api/tenant/domains').set('Authorization', a.auth).send({ domain }).expect(201);
    dns.set(c.body.verification.name, { txt: [c.body.verification.value] });
    await request(t.app).post(`/api/tenant/domains/${domain}/verify`).set('Authorization', a.auth).expect(200);
    const due = () => ownerConnection()('tenant_domains').where({ tenant_id: a.id, domain }).update({ next_check_at: ownerConnection().raw("now() - interval '1 second'") });
    const row = () => ownerConnection()('tenant_domains').where({ tenant_id: a.id, domain }).first('status', 'misses');
    const lookup = txtLookup([dns.address]);
    const pass = () => runDomainChecks(t.db, lookup);

    dns.set(c.body.verification.name, 'nxdomain');
    await due();
    // Two instances at once: the due check runs on one of them.
    await Promise.all([pass(), pass()]);
    expect(await row()).toMatchObject({ status: 'verified', misses: 1 });
    dns.set(c.body.verification.name, { txt: [c.body.verification.value] });
    await due();
    await pass();
    expect(await row()).toMatchObject({ status: 'verified', misses: 0 });
    dns.set(c.body.verification.name, { txt: ['something else'] });
    for (let i = 0; i < 3; i++) {
      await due();
      await pass();
    }
    expect(await row()).toMatchObject({ status: 'lapsed', misses: 3 });
    expect(await ownerConnection()('events').where({ tenant_id: a.id, action: 'domain.lapsed' })).toHaveLength(1);
    // A successful verify restores it.
    dns.set(c.body.verification.name, { txt: [c.body.verification.value] });
    const back = await request(t.app).post(`/api/tenant/domains/${domain}/verify`).set('Authorization', a.auth).expect(200);
    expect(back.body.status).toBe('verified');
  });
});
