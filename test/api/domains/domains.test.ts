/**
 * Verified domains (docs/domains.md) against a real DNS server (test/helpers/dns-server.ts):
 * claiming and its bad input, proof by TXT record, what a failed proof names, one verified
 * owner (also for two tenants at the same moment), the limit, a platform admin's mark.
 */
import request from 'supertest';
import { startTestApp, type TestApp } from '../../helpers/app';
import { startDnsServer, type DnsServer } from '../../helpers/dns-server';
import { adminToken, closeOwnerConnection, createUser, ownerConnection, tokenFor, unique } from '../../helpers/factories';

let t: TestApp;
let dns: DnsServer;
beforeAll(async () => {
  dns = await startDnsServer();
  t = await startTestApp({ SERVICE_MULTI_TENANT_MODE: 'true', SERVICE_DNS_SERVERS: dns.address });
});
afterAll(async () => {
  await t.close();
  await dns.close();
  await closeOwnerConnection();
});

/** A tenant and its admin's Authorization header (X-Tenant names it). */
async function tenantAdmin(): Promise<{ id: string; slug: string; auth: string }> {
  const slug = unique('dom');
  const r = await request(t.app).post('/api/setup/tenant').set('Authorization', `Bearer ${adminToken()}`).send({ name: slug, slug }).expect(201);
  const a = await createUser(r.body.tenant_id, { role: 'admin' });
  return { id: r.body.tenant_id, slug, auth: `Bearer ${tokenFor({ sub: a.subject, claims: { tenant: slug } })}` };
}

const claim = (auth: string, domain: string) => request(t.app).post('/api/tenant/domains').set('Authorization', auth).send({ domain });
const verify = (auth: string, domain: string) => request(t.app).post(`/api/tenant/domains/${encodeURIComponent(domain)}/verify`).set('Authorization', auth);
const zone = () => `${unique('z')}.example`;

describe('claiming', () => {
  it('201 pending with the TXT record to publish (32 random bytes, base64url); the event says so', async () => {
    const a = await tenantAdmin();
    const domain = zone();
    const r = await claim(a.auth, domain).expect(201);
    expect(r.body).toMatchObject({ domain, domain_ascii: domain, status: 'pending', join: 'none', join_role: 'member', verified_at: null, checked_at: null, verified_by: null });
    expect(r.body.verification).toEqual({ type: 'TXT', name: `_tenant-service.${domain}`, value: expect.stringMatching(/^tenant-service-verification=[A-Za-z0-9_-]{43}$/) });
    const other = await claim((await tenantAdmin()).auth, domain).expect(201);
    expect(other.body.verification.value).not.toBe(r.body.verification.value); // claiming is free: several pending claims
    await claim(a.auth, domain).expect(409);
    const ev = await ownerConnection()('events').where({ tenant_id: a.id, action: 'domain.claimed' }).first('target_id');
    expect(ev.target_id).toBe(domain);
    const list = await request(t.app).get('/api/tenant/domains').set('Authorization', a.auth).expect(200);
    expect(list.body.domains.map((d: { domain: string }) => d.domain)).toEqual([domain]);
  });

  it('trailing dot, upper case and Unicode are normalized: A-label stored, U-label shown', async () => {
    const a = await tenantAdmin();
    const base = zone();
    expect((await claim(a.auth, `${base.toUpperCase()}.`).expect(201)).body.domain_ascii).toBe(base);
    const label = unique('bücher');
    const u = await claim(a.auth, `${label.toUpperCase()}.example`).expect(201);
    expect(u.body.domain).toBe(`${label}.example`);
    expect(u.body.domain_ascii).toMatch(/^xn--[a-z0-9-]+\.example$/);
    expect(u.body.verification.name).toBe(`_tenant-service.${u.body.domain_ascii}`);
    // Named by either form.
    await request(t.app).get(`/api/tenant/domains/${encodeURIComponent(u.body.domain)}`).set('Authorization', a.auth).expect(200);
    await request(t.app).get(`/api/tenant/domains/${u.body.domain_ascii}`).set('Authorization', a.auth).expect(200);
    // A look-alike is just another domain.
    expect((await claim(a.auth, 'acme.com.evil.test').expect(201)).body.domain_ascii).toBe('acme.com.evil.test');
  });

  it.each([
    ['*.acme.com', 'wildcard'],
    ['127.0.0.1', 'IP address'],
    ['[::1]', ''],
    ['localhost', 'registrable'],
    ['co.uk', 'public suffix'],
    ['github.io', 'public suffix'],
    ['com', 'registrable'],
    ['gmail.com', 'mail provider'],
    ['mailinator.com', 'mail provider'],
    ['acme..com', 'valid'],
    ['-acme.com', 'valid'],
    ['acme.com/x', 'domain name'],
    ['ann@acme.com', 'domain name'],
    ['', ''],
  ])('%j is 400 with the documented error body', async (domain, why) => {
    const a = await tenantAdmin();
    const r = await claim(a.auth, domain).expect(400);
    expect(r.body.error).toBe('Validation error');
    expect(r.body.detail).toContain(why);
    expect(typeof r.body.request_id).toBe('string');
  });

  it('20 domains per tenant', async () => {
    const a = await tenantAdmin();
    const base = zone();
    for (let i = 0; i < 20; i++) await claim(a.auth, `d${i}.${base}`).expect(201);
    const r = await claim(a.auth, `d20.${base}`).expect(409);
    expect(r.body.detail).toContain('20 domains');
    await request(t.app).delete(`/api/tenant/domains/d0.${base}`).set('Authorization', a.auth).expect(204);
    await claim(a.auth, `d20.${base}`).expect(201);
  });

  it('members who are not admins may not claim', async () => {
    const a = await tenantAdmin();
    const m = await createUser(a.id, { role: 'member' });
    await claim(`Bearer ${tokenFor({ sub: m.subject, claims: { tenant: a.slug } })}`, zone()).expect(403);
  });
});

describe('proof by DNS', () => {
  it('the exact value verifies (among other TXT records); the event records it', async () => {
    const a = await tenantAdmin();
    const domain = zone();
    const c = await claim(a.auth, domain).expect(201);
    dns.set(c.body.verification.name, { txt: ['v=spf1 -all', c.body.verification.value] });
    const r = await verify(a.auth, domain).expect(200);
    expect(r.body).toMatchObject({ status: 'verified', verified_by: 'dns' });
    expect(r.body.verified_at).not.toBeNull();
    const ev = await ownerConnection()('events').where({ tenant_id: a.id, action: 'domain.verified' }).first('data');
    expect(ev.data.by).toBe('dns');
  });

  it.each([
    ['nxdomain' as const, 'NXDOMAIN'],
    ['servfail' as const, 'SERVFAIL'],
    ['nodata' as const, 'no TXT record'],
  ])('%s → 409 Domain not verified naming the record and what came back', async (answer, said) => {
    const a = await tenantAdmin();
    const domain = zone();
    const c = await claim(a.auth, domain).expect(201);
    dns.set(c.body.verification.name, answer);
    const r = await verify(a.auth, domain).expect(409);
    expect(r.body.error).toBe('Domain not verified');
    expect(r.body.detail).toContain(c.body.verification.name);
    expect(r.body.detail).toContain(c.body.verification.value);
    expect(r.body.detail).toContain(said);
    const after = await request(t.app).get(`/api/tenant/domains/${domain}`).set('Authorization', a.auth).expect(200);
    expect(after.body.status).toBe('pending');
    expect(after.body.checked_at).not.toBeNull();
  });

  it('other values are named; a value that only contains the token does not verify', async () => {
    const a = await tenantAdmin();
    const domain = zone();
    const c = await claim(a.auth, domain).expect(201);
    dns.set(c.body.verification.name, { txt: [`${c.body.verification.value}x`, 'tenant-service-verification=someone-else'] });
    const r = await verify(a.auth, domain).expect(409);
    expect(r.body.detail).toContain('other values');
    expect(r.body.detail).toContain('someone-else');
  });

  it('a server that never answers: 409 saying so, not a 500 and not a hung request', async () => {
    const a = await tenantAdmin();
    const domain = zone();
    const c = await claim(a.auth, domain).expect(201);
    dns.set(c.body.verification.name, 'timeout');
    const r = await verify(a.auth, domain).expect(409);
    expect(r.body.detail).toContain('timeout');
  });

  it('a domain another tenant verified: 409 Domain taken (before DNS); a subdomain of it may be verified', async () => {
    const a = await tenantAdmin();
    const b = await tenantAdmin();
    const domain = zone();
    const ca = await claim(a.auth, domain).expect(201);
    const cb = await claim(b.auth, domain).expect(201);
    dns.set(ca.body.verification.name, { txt: [ca.body.verification.value, cb.body.verification.value] });
    await verify(a.auth, domain).expect(200);
    const r = await verify(b.auth, domain).expect(409);
    expect(r.body.error).toBe('Domain taken');
    const sub = await claim(b.auth, `eu.${domain}`).expect(201);
    dns.set(sub.body.verification.name, { txt: [sub.body.verification.value] });
    await verify(b.auth, `eu.${domain}`).expect(200);
  });

  it('two tenants verifying the same domain at the same moment: exactly one wins', async () => {
    for (let round = 0; round < 3; round++) {
      const [a, b] = await Promise.all([tenantAdmin(), tenantAdmin()]);
      const domain = zone();
      const ca = await claim(a.auth, domain).expect(201);
      const cb = await claim(b.auth, domain).expect(201);
      dns.set(ca.body.verification.name, { txt: [ca.body.verification.value, cb.body.verification.value] });
      const answers = await Promise.all([verify(a.auth, domain), verify(b.auth, domain)]);
      expect(answers.map((x) => x.status).sort()).toEqual([200, 409]);
      expect(answers.find((x) => x.status === 409)!.body.error).toBe('Domain taken');
      const owners = await ownerConnection()('tenant_domains').where({ domain, status: 'verified' });
      expect(owners).toHaveLength(1);
    }
  });
});

describe('a platform admin marks a domain verified', () => {
  it('claims and verifies without DNS (201), 200 when held; 409 Domain taken for another tenant', async () => {
    const a = await tenantAdmin();
    const b = await tenantAdmin();
    const domain = zone();
    const admin = `Bearer ${adminToken()}`;
    const r = await request(t.app).post(`/api/setup/tenant/${a.id}/domains`).set('Authorization', admin).send({ domain, verified: true }).expect(201);
    expect(r.body).toMatchObject({ status: 'verified', verified_by: 'platform_admin' });
    await request(t.app).post(`/api/setup/tenant/${a.id}/domains`).set('Authorization', admin).send({ domain, verified: true }).expect(200);
    const taken = await request(t.app).post(`/api/setup/tenant/${b.id}/domains`).set('Authorization', admin).send({ domain, verified: true }).expect(409);
    expect(taken.body.error).toBe('Domain taken');
    const ev = await ownerConnection()('events').where({ tenant_id: a.id, action: 'domain.verified' }).first('data');
    expect(ev.data.by).toBe('platform_admin');
    await request(t.app).post(`/api/setup/tenant/${a.id}/domains`).set('Authorization', a.auth).send({ domain: zone(), verified: true }).expect(403);
    await request(t.app).post('/api/setup/tenant/00000000-0000-4000-8000-000000000000/domains').set('Authorization', admin).send({ domain: zone(), verified: true }).expect(404);
  });
});

describe('removing', () => {
  it('204, event domain.removed; 404 for a domain the tenant does not hold', async () => {
    const a = await tenantAdmin();
    const domain = zone();
    await claim(a.auth, domain).expect(201);
    await request(t.app).delete(`/api/tenant/domains/${domain}`).set('Authorization', a.auth).expect(204);
    await request(t.app).delete(`/api/tenant/domains/${domain}`).set('Authorization', a.auth).expect(404);
    expect(await ownerConnection()('events').where({ tenant_id: a.id, action: 'domain.removed' })).toHaveLength(1);
  });
});
