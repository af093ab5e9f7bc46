/**
 * Sign-in end to end, every part real and wired as in production (no harness on either side):
 * a product (openid-client 6) sends a person to the service's provider with `organization=`;
 * the sign-in pages send them straight to the tenant's connection — an OIDC provider
 * (oidc-provider, in-process) or a SAML IdP (samlify) — whose answer the connection checks and
 * hands to the pages, which admit the person to that tenant and return them to the product with
 * a code. The product's tokens then work as bearer tokens of the service; a removed member is
 * refused at the next sign-in (a page with a reference) and at the next refresh (invalid_grant).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import zlib from 'node:zlib';
import request from 'supertest';
import { startTestApp, type TestApp } from '../../helpers/app';
import { adminToken, closeOwnerConnection, createUser, ownerConnection, tokenFor, unique } from '../../helpers/factories';
import { makeKeyAndCert } from '../sso/helpers/certs';
import { requestIdOf, startSamlIdp, type SamlIdp } from '../sso/helpers/saml-idp';
import { startUpstreamOidc, type UpstreamOidc } from '../sso/helpers/upstream-oidc';
import { parseExposition, sampleValue } from '../../helpers/prometheus';
import { waitFor } from '../../helpers/wait';
import { authorizationRequest, CookieJar, discover, openidClient, payloadOf } from './provider-harness';

let t: TestApp;
let server: http.Server;
let base: string;
let up: UpstreamOidc;
let saml: SamlIdp;
const admin = { Authorization: `Bearer ${adminToken()}` };
const REDIRECT_PATH = '/product/callback';

/** A tenant with its admin, and one SSO connection of `body`. */
async function tenantWithConnection(body: (t: { id: string }) => object): Promise<{ id: string; slug: string; adminAuth: string; connection: Record<string, string> }> {
  const slug = unique('fed');
  const made = await request(t.app).post('/api/setup/tenant').set(admin).send({ name: slug, slug }).expect(201);
  const a = await createUser(made.body.tenant_id, { role: 'admin' });
  const adminAuth = `Bearer ${tokenFor({ sub: a.subject, claims: { tenant: slug } })}`;
  const c = await request(t.app).post('/api/tenant/sso/connections').set('Authorization', adminAuth).send(body({ id: made.body.tenant_id }));
  if (c.status !== 201) throw new Error(`createSsoConnection answered ${c.status}: ${JSON.stringify(c.body)}`);
  return { id: made.body.tenant_id, slug, adminAuth, connection: c.body };
}

/** The product: a confidential client of the provider with its redirect URI on this test's server. */
async function product() {
  const c = await request(t.app)
    .post('/api/setup/clients')
    .set(admin)
    .send({ name: unique('product'), type: 'confidential', redirect_uris: [`${base}${REDIRECT_PATH}`] })
    .expect(201);
  return { config: await discover({ issuer: `${base}/oidc` }, c.body.client_id, c.body.client_secret), redirectUri: `${base}${REDIRECT_PATH}` };
}

/**
 * The browser from the product's authorization request until it is back at the product's
 * redirect URI (or stops at a page). A SAML IdP is a form the browser posts: `samlAnswer` writes it.
 */
async function browse(jars: Jars, start: URL, redirectUri: string, samlAnswer?: (location: string) => Promise<string>): Promise<{ back: URL } | { page: Response; url: URL }> {
  let url = start;
  for (let hop = 0; hop < 20; hop++) {
    if (url.href.startsWith(redirectUri)) return { back: url };
    let res: Response;
    if (samlAnswer && url.href.startsWith(saml.ssoUrl)) {
      const samlResponse = await samlAnswer(url.href);
      const relay = url.searchParams.get('RelayState');
      const target = new URL(`${base}/sso/saml/${samlConnectionOf(url.href)}/acs`);
      // The IdP's form posts across sites: the browser sends the service no SameSite=Lax cookie with it.
      res = await fetch(target, { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ SAMLResponse: samlResponse, ...(relay ? { RelayState: relay } : {}) }).toString() });
      jars.of(target).take(res);
    } else {
      res = await jars.of(url).get(url);
    }
    const location = res.headers.get('location');
    if (res.status < 300 || res.status >= 400 || !location) return { page: res, url };
    url = new URL(location, url);
  }
  throw new Error('more than 20 redirects');
}

/** A browser's cookies, one jar per origin (the service's provider and the tenant's IdP name their cookies alike). */
class Jars {
  private readonly jars = new Map<string, CookieJar>();
  of(url: URL): CookieJar {
    const jar = this.jars.get(url.origin) ?? new CookieJar();
    this.jars.set(url.origin, jar);
    return jar;
  }
}

/** The connection an AuthnRequest came from: its Issuer is the connection's SP entity id. */
function samlConnectionOf(location: string): string {
  const xml = zlib.inflateRawSync(Buffer.from(new URL(location).searchParams.get('SAMLRequest')!, 'base64')).toString('utf8');
  const issuer = /<(?:saml2?:)?Issuer[^>]*>([^<]+)</.exec(xml)![1]!;
  return issuer.split('/sso/saml/')[1]!;
}

async function signIn(config: Awaited<ReturnType<typeof discover>>, redirectUri: string, extra: Record<string, string>, samlAnswer?: (location: string) => Promise<string>) {
  const oidc = await openidClient();
  const req = await authorizationRequest(config, redirectUri, extra);
  const out = await browse(new Jars(), req.url, redirectUri, samlAnswer);
  if (!('back' in out)) return { kind: 'page' as const, page: out.page, url: out.url };
  const tokens = await oidc.authorizationCodeGrant(config, out.back, { pkceCodeVerifier: req.verifier, expectedState: req.state, expectedNonce: req.nonce });
  return { kind: 'tokens' as const, tokens };
}

async function events(tenantId: string, action: string): Promise<Array<Record<string, unknown>>> {
  return (await ownerConnection()('events').where({ tenant_id: tenantId, action }).orderBy('occurred_at')) as Array<Record<string, unknown>>;
}

beforeAll(async () => {
  server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  t = await startTestApp({ SERVICE_MULTI_TENANT_MODE: 'true', SERVICE_PUBLIC_URL: base, SERVICE_SSO_ALLOW_PRIVATE_NETWORKS: 'true' });
  server.on('request', (req, res) => (req.url?.startsWith(REDIRECT_PATH) ? res.end('back at the product') : t.app(req, res)));
  up = await startUpstreamOidc(`${base}/sso/oidc/callback`);
  saml = startSamlIdp(makeKeyAndCert());
});
afterAll(async () => {
  await up?.close();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await t.close();
  await closeOwnerConnection();
});

describe('through a tenant’s OIDC connection', () => {
  it('organization= goes straight to the IdP; the person comes back a member of that tenant with the claims, and the token works on the API', async () => {
    const acme = await tenantWithConnection(() => ({ type: 'oidc', name: 'Acme IdP', issuer: up.issuer, client_id: up.clientId, client_secret: up.clientSecret }));
    const { config, redirectUri } = await product();
    up.person = { sub: unique('upstream'), email: 'Dana@Acme.test', email_verified: true, name: 'Dana' };
    const r = await signIn(config, redirectUri, { organization: acme.slug, login_hint: 'dana@acme.test' });
    if (r.kind === 'page') throw new Error(`stopped at ${r.url.href}: ${r.page.status} ${await r.page.text()}`);
    expect(up.lastLoginHint).toBe('dana@acme.test');
    const claims = r.tokens.claims()!;
    expect(claims).toMatchObject({ tenant_id: acme.id, tenant: acme.slug, tenant_role: 'member', email: 'dana@acme.test', sso_connection_id: acme.connection.connection_id });
    expect(Array.isArray(claims.permissions)).toBe(true);
    expect(payloadOf(r.tokens.access_token)).toMatchObject({ sub: claims.sub, tenant_id: acme.id });

    const me = await request(t.app).get('/api/tenant').set('Authorization', `Bearer ${r.tokens.access_token}`);
    expect(me.status).toBe(200);
    expect(me.body.tenant.tenant_id).toBe(acme.id);
    expect(me.body.source).toBe('tenant_id_claim');
    expect(me.body.membership.role).toBe('member');
    const signedIn = await events(acme.id, 'user.signed_in');
    expect(signedIn.at(-1)!.data).toMatchObject({ account_id: claims.sub, method: 'sso', connection_id: acme.connection.connection_id, provisioned: true });

    // The same person again: the same account, no second membership.
    const again = await signIn(config, redirectUri, { organization: acme.slug });
    if (again.kind === 'page') throw new Error('second sign-in stopped at a page');
    expect(again.tokens.claims()!.sub).toBe(claims.sub);
    const members = await ownerConnection()('users').where({ tenant_id: acme.id, subject: claims.sub });
    expect(members).toHaveLength(1);

    // Removed: the refresh is refused, and the next sign-in shows a page with a reference, no code.
    await request(t.app).delete(`/api/tenant/members/${members[0].id}`).set('Authorization', acme.adminAuth).expect(204);
    const oidc = await openidClient();
    await expect(oidc.refreshTokenGrant(config, again.tokens.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });
    const refused = await signIn(config, redirectUri, { organization: acme.slug });
    if (refused.kind !== 'page') throw new Error('a removed member signed in');
    expect(refused.page.status).toBeLessThan(500);
    expect(await refused.page.text()).toMatch(/reference/i);
    const failed = await events(acme.id, 'user.sign_in_failed');
    expect(failed.at(-1)!.data).toMatchObject({ reason: 'removed' });
    expect(JSON.stringify(failed)).not.toContain(up.clientSecret);
  });
});

describe('a slow identity provider', () => {
  it('holds no sign-in slot while it answers: with more callbacks waiting for its token endpoint than the instance has slots, the provider still answers, and every sign-in then finishes', async () => {
    const acme = await tenantWithConnection(() => ({ type: 'oidc', name: 'Slow IdP', issuer: up.issuer, client_id: up.clientId, client_secret: up.clientSecret }));
    const { config, redirectUri } = await product();
    up.person = { sub: unique('slow'), email: 'slow@acme.test', email_verified: true, name: 'Slow' };
    // One more than the slots of the instance (one per core, at least two).
    const callbacks = Math.max(2, os.availableParallelism()) + 1;
    let release!: () => void;
    up.tokenEndpointHeld = new Promise<void>((resolve) => (release = resolve));
    try {
      const signIns = Array.from({ length: callbacks }, () => signIn(config, redirectUri, { organization: acme.slug }));
      await waitFor(`${callbacks} code exchanges waiting at the identity provider`, () => up.tokenRequestsWaiting === callbacks || undefined);
      // Each of those callbacks is a sign-in request of the instance that gave its slot back
      // (not one that overran its slot): the gauge counts them elsewhere, none working.
      const families = parseExposition((await request(t.app).get('/metrics').expect(200)).text);
      expect(sampleValue(families, 'tenant_service_sign_in_requests', { state: 'elsewhere' })).toBe(callbacks);
      expect(sampleValue(families, 'tenant_service_sign_in_requests', { state: 'working' })).toBe(0);
      expect(sampleValue(families, 'tenant_service_sign_in_requests', { state: 'waiting' })).toBe(0);
      const discovery = await fetch(`${base}/oidc/.well-known/openid-configuration`);
      expect(discovery.status).toBe(200);
      up.tokenEndpointHeld = null;
      release();
      for (const r of await Promise.all(signIns)) {
        if (r.kind === 'page') throw new Error(`stopped at ${r.url.href}: ${r.page.status}`);
        expect(r.tokens.claims()).toMatchObject({ tenant_id: acme.id });
      }
    } finally {
      up.tokenEndpointHeld = null;
      release();
    }
  });
});

describe('through a tenant’s SAML connection', () => {
  it('the AuthnRequest goes by redirect, the signed Response comes back by POST, and the person is admitted to that tenant only', async () => {
    const globex = await tenantWithConnection(() => ({ type: 'saml', name: 'Globex ADFS', idp_entity_id: saml.entityId, idp_sso_url: saml.ssoUrl, idp_certificate: saml.keyCert.cert }));
    const { config, redirectUri } = await product();
    const email = `${unique('lee')}@globex.test`;
    const answer = (location: string) =>
      saml.respond({ spEntityId: globex.connection.sp_entity_id!, acsUrl: globex.connection.acs_url!, requestId: requestIdOf(location), nameId: email, sign: 'both' });
    const r = await signIn(config, redirectUri, { organization: globex.slug }, answer);
    if (r.kind === 'page') throw new Error(`stopped at ${r.url.href}: ${r.page.status} ${await r.page.text()}`);
    expect(r.tokens.claims()).toMatchObject({ tenant_id: globex.id, tenant: globex.slug, tenant_role: 'member', email, sso_connection_id: globex.connection.connection_id });

    // The same Response again (a replay): refused with a page, never a 500, never a code.
    const req = await authorizationRequest(config, redirectUri, { organization: globex.slug });
    let replayed: string | null = null;
    const out = await browse(new Jars(), req.url, redirectUri, async (location) => {
      replayed ??= await answer(location);
      return replayed;
    });
    expect('back' in out).toBe(true);
    const req2 = await authorizationRequest(config, redirectUri, { organization: globex.slug });
    const out2 = await browse(new Jars(), req2.url, redirectUri, async () => replayed!);
    expect('page' in out2).toBe(true);
    if ('page' in out2) expect(out2.page.status).toBeGreaterThanOrEqual(400);
    if ('page' in out2) expect(out2.page.status).toBeLessThan(500);
  });
});
