/**
 * A tenant's SSO connections and sso_required (docs/sso.md): create (OIDC after a real discovery,
 * SAML from metadata or fields), read, change, delete; who may; the limit; bad input; the client
 * secret sealed at rest and absent from every answer and event; the network rule without
 * SERVICE_SSO_ALLOW_PRIVATE_NETWORKS.
 */
import request from 'supertest';
import { startTestApp, type TestApp } from '../../helpers/app';
import { createFreshDatabase, type FreshDatabase } from '../../helpers/fresh-database';
import { closeOwnerConnection, createUser, ownerConnection, tokenFor } from '../../helpers/factories';
import { startCraftedIdp, type CraftedIdp } from './helpers/crafted-idp';
import { idpMetadataXml, makeKeyAndCert, type KeyAndCert } from './helpers/certs';
import { startSsoHarness, tenantAdmin, type SsoHarness } from './helpers/harness';

const SECRET = 'k'.repeat(48);
let h: SsoHarness;
let idp: CraftedIdp;
let cert: KeyAndCert;
let strict: TestApp;
let fresh: FreshDatabase;
beforeAll(async () => {
  // A database of its own: an instance with SERVICE_KEY_ENCRYPTION_SECRET seals every plain secret
  // it finds at boot, after which the other suites' instances (without it) would refuse plain ones.
  fresh = await createFreshDatabase('tenant_service_sso');
  process.env.TEST_DATABASE_URL = fresh.url;
  h = await startSsoHarness({ SERVICE_KEY_ENCRYPTION_SECRET: SECRET });
  idp = await startCraftedIdp('client-1');
  cert = makeKeyAndCert();
  strict = await startTestApp({ SERVICE_MULTI_TENANT_MODE: 'true', SERVICE_PUBLIC_URL: 'https://tenants.example.com' });
});
afterAll(async () => {
  await h.close();
  await strict.close();
  await idp.close();
  await closeOwnerConnection();
  await fresh.drop();
});

const create = (auth: string, body: object, app = h.t.app) => request(app).post('/api/tenant/sso/connections').set('Authorization', auth).send(body);
const oidc = (over: object = {}) => ({ type: 'oidc', name: 'Okta', issuer: idp.issuer, client_id: 'client-1', client_secret: 'the-client-secret-value', ...over });
const saml = (over: object = {}) => ({ type: 'saml', name: 'ADFS', idp_entity_id: 'http://adfs.example.com/adfs/services/trust', idp_sso_url: 'https://adfs.example.com/adfs/ls/', idp_certificate: cert.cert, ...over });

describe('OIDC connections', () => {
  it('201 after discovery, with the redirect URI; the secret is sealed at rest and never answered nor in the event', async () => {
    const a = await tenantAdmin(h.t);
    const r = await create(a.auth, oidc({ scopes: ['email', 'groups'] })).expect(201);
    expect(r.body).toEqual({
      connection_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      type: 'oidc',
      name: 'Okta',
      status: 'active',
      redirect_uri: `${h.base}/sso/oidc/callback`,
      issuer: idp.issuer,
      client_id: 'client-1',
      scopes: ['openid', 'email', 'groups'],
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    const row = await ownerConnection()('sso_connections').where({ id: r.body.connection_id }).first();
    expect(row.oidc_client_secret).toMatch(/^enc1\./);
    expect(row.oidc_client_secret).not.toContain('the-client-secret-value');
    const list = await request(h.t.app).get('/api/tenant/sso/connections').set('Authorization', a.auth).expect(200);
    const one = await request(h.t.app).get(`/api/tenant/sso/connections/${r.body.connection_id}`).set('Authorization', a.auth).expect(200);
    await request(h.t.app).patch(`/api/tenant/sso/connections/${r.body.connection_id}`).set('Authorization', a.auth).send({ client_secret: 'a-new-secret-value' }).expect(200);
    const events = await ownerConnection()('events').where({ tenant_id: a.id }).whereLike('action', 'sso_connection.%').orderBy('occurred_at');
    expect(events.map((e: { action: string }) => e.action)).toEqual(['sso_connection.created', 'sso_connection.updated']);
    for (const text of [JSON.stringify(list.body), JSON.stringify(one.body), JSON.stringify(events), JSON.stringify(h.t.logs)]) {
      expect(text).not.toContain('the-client-secret-value');
      expect(text).not.toContain('a-new-secret-value');
    }
    expect(events[1].data.after).toEqual({ client_secret: '[changed]' });
  });

  it.each([
    ['not a URL', { issuer: 'not a url' }, 'body.issuer'],
    ['an issuer nobody answers at', { issuer: 'http://127.0.0.1:1' }, 'discovery'],
  ])('400 for %s', async (_what, over, words) => {
    const a = await tenantAdmin(h.t);
    const r = await create(a.auth, oidc(over)).expect(400);
    expect(r.body.detail).toContain(words);
  });

  it('400 when the discovery document names another issuer (or lacks its JWKS)', async () => {
    const a = await tenantAdmin(h.t);
    const liar = await startCraftedIdp('client-1');
    try {
      liar.discovery.issuer = 'https://login.example.com';
      expect((await create(a.auth, oidc({ issuer: liar.issuer })).expect(400)).body.detail).toMatch(/discovery of .* failed: .*issuer/);
      liar.discovery.issuer = liar.issuer;
      delete liar.discovery.jwks_uri;
      expect((await create(a.auth, oidc({ issuer: liar.issuer })).expect(400)).body.detail).toContain('jwks_uri');
    } finally {
      await liar.close();
    }
  });

  it('without SERVICE_SSO_ALLOW_PRIVATE_NETWORKS: http and loopback issuers are 400, naming the rule', async () => {
    const a = await tenantAdmin(strict);
    const http = await create(a.auth, oidc(), strict.app).expect(400);
    expect(http.body.detail).toMatch(/https/);
    const loop = await create(a.auth, oidc({ issuer: 'https://127.0.0.1:8443' }), strict.app).expect(400);
    expect(loop.body.detail).toMatch(/loopback network/);
    const local = await create(a.auth, oidc({ issuer: 'https://localhost' }), strict.app).expect(400);
    expect(local.body.detail).toMatch(/loopback/);
    const meta = await create(a.auth, saml({ idp_sso_url: 'https://10.0.0.5/sso' }), strict.app).expect(400);
    expect(meta.body.detail).toMatch(/private network/);
  });
});

describe('SAML connections', () => {
  it('201 from metadata: SP entity id, ACS URL, metadata URL (public, serving SP metadata) and the certificate fingerprint', async () => {
    const a = await tenantAdmin(h.t);
    const xml = idpMetadataXml({ entityId: 'https://sts.windows.net/abc/', ssoUrl: 'https://login.microsoftonline.com/abc/saml2', certBase64: cert.certBase64 });
    const r = await create(a.auth, { type: 'saml', name: 'Entra', idp_metadata_xml: xml }).expect(201);
    const id = r.body.connection_id;
    expect(r.body).toMatchObject({
      type: 'saml',
      status: 'active',
      sp_entity_id: `${h.base}/sso/saml/${id}`,
      acs_url: `${h.base}/sso/saml/${id}/acs`,
      sp_metadata_url: `${h.base}/sso/saml/${id}/metadata`,
      idp_entity_id: 'https://sts.windows.net/abc/',
      idp_sso_url: 'https://login.microsoftonline.com/abc/saml2',
      idp_certificate: { fingerprint_sha256: expect.stringMatching(/^[0-9A-F:]{95}$/), subject: 'CN=test-idp', not_after: expect.any(String) },
    });
    const md = await fetch(r.body.sp_metadata_url);
    expect(md.status).toBe(200);
    const text = await md.text();
    expect(text).toContain(`entityID="${h.base}/sso/saml/${id}"`);
    expect(text).toContain(`Location="${h.base}/sso/saml/${id}/acs"`);
    expect((await fetch(`${h.base}/sso/saml/00000000-0000-4000-8000-000000000000/metadata`)).status).toBe(404);
    expect((await fetch(`${h.base}/sso/saml/not-a-uuid/metadata`)).status).toBe(404);
  });

  it('201 from the three fields (PEM or bare base64)', async () => {
    const a = await tenantAdmin(h.t);
    await create(a.auth, saml()).expect(201);
    await create(a.auth, saml({ idp_certificate: cert.certBase64 })).expect(201);
  });

  it.each([
    ['malformed XML', { idp_metadata_xml: '<md:EntityDescriptor' }, 'well-formed'],
    ['metadata without the HTTP-Redirect binding', 'no-redirect', 'HTTP-Redirect'],
    ['metadata without a signing certificate', 'no-cert', 'signing certificate'],
    ['a DOCTYPE', { idp_metadata_xml: '<!DOCTYPE x [<!ENTITY a "b">]><x/>' }, 'DOCTYPE'],
    ['a certificate that is not one', { idp_entity_id: 'e', idp_sso_url: 'https://idp.example.com/sso', idp_certificate: 'bm90IGEgY2VydA==' }, 'X.509'],
    ['half the fields', { idp_entity_id: 'e' }, 'needs'],
  ])('400 for %s', async (_what, over, words) => {
    const a = await tenantAdmin(h.t);
    const base = { entityId: 'https://idp.example.com', ssoUrl: 'https://idp.example.com/sso', certBase64: cert.certBase64 };
    const body =
      over === 'no-redirect'
        ? { type: 'saml', name: 'x', idp_metadata_xml: idpMetadataXml({ ...base, redirect: false }) }
        : over === 'no-cert'
          ? { type: 'saml', name: 'x', idp_metadata_xml: idpMetadataXml({ ...base, signingCert: false }) }
          : { type: 'saml', name: 'x', ...(over as object) };
    const r = await create(a.auth, body).expect(400);
    expect(r.body.detail).toContain(words);
  });
});

describe('changes, the limit and who may', () => {
  it('PATCH name/status and type-specific fields; a field of the other type is 400; DELETE 204 then 404', async () => {
    const a = await tenantAdmin(h.t);
    const c = (await create(a.auth, saml()).expect(201)).body;
    const url = `/api/tenant/sso/connections/${c.connection_id}`;
    const p = await request(h.t.app).patch(url).set('Authorization', a.auth).send({ name: 'ADFS prod', status: 'inactive', idp_sso_url: 'https://adfs2.example.com/adfs/ls/' }).expect(200);
    expect(p.body).toMatchObject({ name: 'ADFS prod', status: 'inactive', idp_sso_url: 'https://adfs2.example.com/adfs/ls/' });
    const other = makeKeyAndCert('rotated');
    const rot = await request(h.t.app).patch(url).set('Authorization', a.auth).send({ idp_certificate: other.cert }).expect(200);
    expect(rot.body.idp_certificate.subject).toBe('CN=rotated');
    await request(h.t.app).patch(url).set('Authorization', a.auth).send({ client_secret: 'x' }).expect(400);
    await request(h.t.app).delete(url).set('Authorization', a.auth).expect(204);
    await request(h.t.app).get(url).set('Authorization', a.auth).expect(404);
    const ev = await ownerConnection()('events').where({ tenant_id: a.id, action: 'sso_connection.deleted' }).first('target_id');
    expect(ev.target_id).toBe(c.connection_id);
  });

  it('5 connections per tenant: the 6th is 409 (Conflict), like the other per-tenant limits', async () => {
    const a = await tenantAdmin(h.t);
    for (let i = 0; i < 5; i++) await create(a.auth, saml({ name: `n${i}` })).expect(201);
    const r = await create(a.auth, saml({ name: 'sixth' })).expect(409);
    expect(r.body.detail).toContain('5');
  });

  it('a member without tenant:sso:manage: 403 on every operation; another tenant sees none of them', async () => {
    const a = await tenantAdmin(h.t);
    const c = (await create(a.auth, saml()).expect(201)).body;
    const m = await createUser(a.id, { role: 'member' });
    const member = `Bearer ${tokenFor({ sub: m.subject, claims: { tenant: a.slug } })}`;
    await request(h.t.app).get('/api/tenant/sso/connections').set('Authorization', member).expect(403);
    await create(member, saml()).expect(403);
    await request(h.t.app).get(`/api/tenant/sso/connections/${c.connection_id}`).set('Authorization', member).expect(403);
    await request(h.t.app).patch('/api/tenant/sso').set('Authorization', member).send({ sso_required: false }).expect(403);
    const b = await tenantAdmin(h.t);
    await request(h.t.app).get(`/api/tenant/sso/connections/${c.connection_id}`).set('Authorization', b.auth).expect(404);
    expect((await request(h.t.app).get('/api/tenant/sso/connections').set('Authorization', b.auth).expect(200)).body.connections).toEqual([]);
  });
});

describe('sso_required', () => {
  it('409 without an active connection; true once one is active; the last active one cannot then go', async () => {
    const a = await tenantAdmin(h.t);
    const sso = () => request(h.t.app).patch('/api/tenant/sso').set('Authorization', a.auth);
    expect((await request(h.t.app).get('/api/tenant/sso').set('Authorization', a.auth).expect(200)).body).toEqual({ sso_required: false, connection_id: null, updated_at: null });
    expect((await sso().send({ sso_required: true }).expect(409)).body.detail).toMatch(/lock every member out/);
    const c = (await create(a.auth, saml()).expect(201)).body;
    const on = await sso().send({ sso_required: true }).expect(200);
    expect(on.body).toMatchObject({ sso_required: true, connection_id: c.connection_id });
    const url = `/api/tenant/sso/connections/${c.connection_id}`;
    await request(h.t.app).patch(url).set('Authorization', a.auth).send({ status: 'inactive' }).expect(409);
    await request(h.t.app).delete(url).set('Authorization', a.auth).expect(409);
    await sso().send({ sso_required: false }).expect(200);
    await request(h.t.app).delete(url).set('Authorization', a.auth).expect(204);
    const ev = await ownerConnection()('events').where({ tenant_id: a.id, action: 'sso_settings.updated' }).orderBy('occurred_at').select('data');
    expect(ev.map((e: { data: { after: unknown } }) => e.data.after)).toEqual([{ sso_required: true }, { sso_required: false }]);
  });
});
