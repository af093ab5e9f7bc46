/**
 * Who a tenant's connection admits, and accounts (docs/sign-in.md#who-a-connection-admits), over
 * real HTTP: home realm discovery sends the browser to the tenant's connection without a page;
 * the connection's callback (a stand-in for src/sso on its own port) hands the identity back;
 * the person becomes a member of that tenant only, never when removed; an account is linked only
 * by an email both sides vouch for at a verified domain; a failed sign-in shows a reference the
 * tenant finds in its events; switching organization with prompt=none.
 */
import crypto from 'node:crypto';
import { closeOwnerConnection, createTenant, createUser, ownerConnection, unique } from '../../helpers/factories';
import { browse, CookieJar, openidClient, registerClient } from './provider-harness';
import { mailedCode, startPagesApp, type PagesApp } from './pages-harness';

let p: PagesApp;

beforeAll(async () => {
  p = await startPagesApp();
});

afterAll(async () => {
  await p.close();
  await closeOwnerConnection();
});

const IDP = 'https://idp.example.test';

async function verifiedDomain(tenantId: string, domain: string, join: 'none' | 'automatic' = 'none'): Promise<void> {
  await ownerConnection()('tenant_domains').insert({ tenant_id: tenantId, domain, token: crypto.randomBytes(32).toString('base64url'), status: 'verified', join_policy: join, verified_by: 'platform_admin', verified_at: new Date() });
}

/** A tenant with an active connection whose identity provider vouches for `who`. */
async function tenantWithConnection(who: { subject: string; email: string | null; emailVerified: boolean }, opts: { domain?: string } = {}) {
  const tenant = await createTenant();
  const connectionId = crypto.randomUUID();
  p.sso.tenants.set(tenant.id, { ssoRequired: false, connection: { connectionId, type: 'oidc' } });
  p.sso.identities.set(connectionId, { tenantId: tenant.id, protocol: 'oidc', issuer: `${IDP}/${connectionId}`, subject: who.subject, email: who.email, emailVerified: who.emailVerified, name: 'Pat' });
  if (opts.domain) await verifiedDomain(tenant.id, opts.domain);
  return { tenant, connectionId };
}

async function authorize(extra: Record<string, string> = {}, reuse?: { clientId: string; redirectUri: string }) {
  const oidc = await openidClient();
  const { clientId, redirectUri } = reuse ?? (await registerClient(p as never));
  const config = await oidc.discovery(new URL(p.issuer), clientId, undefined, oidc.None(), { execute: [oidc.allowInsecureRequests] });
  const verifier = oidc.randomPKCECodeVerifier();
  const state = oidc.randomState();
  const url = oidc.buildAuthorizationUrl(config, { redirect_uri: redirectUri, scope: 'openid email', code_challenge: await oidc.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256', state, ...extra });
  const tokens = async (back: URL) => (await oidc.authorizationCodeGrant(config, back, { pkceCodeVerifier: verifier, expectedState: state })).claims()!;
  return { url, redirectUri, clientId, tokens };
}

/** Follows the browser through the IdP stand-in back to the client (or to the page it stops at). */
async function run(jar: CookieJar, url: URL, redirectUri: string) {
  const r = await browse(jar, url, redirectUri, 20);
  return r;
}

describe('home realm discovery', () => {
  it('login_hint at a verified domain goes straight to its connection; the person becomes a member of that tenant only', async () => {
    const domain = `${unique('acme')}.test`;
    const subject = unique('sub');
    const { tenant, connectionId } = await tenantWithConnection({ subject, email: `pat@${domain}`, emailVerified: true }, { domain });
    const a = await authorize({ login_hint: `Pat@${domain}` });
    const jar = new CookieJar();
    const started = p.sso.started.length;
    const r = await run(jar, a.url, a.redirectUri);
    expect('res' in r).toBe(false);
    expect(p.sso.started.slice(started)).toEqual([{ connectionId, loginHint: `pat@${domain}` }]);
    const claims = await a.tokens(r.url);
    expect(claims).toEqual(expect.objectContaining({ tenant_id: tenant.id, tenant_role: 'member', sso_connection_id: connectionId, email: `pat@${domain}` }));
    const member = await ownerConnection()('users').where({ tenant_id: tenant.id, issuer: p.issuer, subject: claims.sub }).first('role');
    expect(member.role).toBe('member');
    expect(await ownerConnection()('users').where({ issuer: p.issuer, subject: claims.sub }).count('* as n').first()).toEqual({ n: '1' });
    const ev = await ownerConnection()('events').where({ tenant_id: tenant.id, action: 'user.signed_in' }).first('data');
    expect(ev.data).toEqual(expect.objectContaining({ account_id: claims.sub, method: 'sso', connection_id: connectionId, provisioned: true }));
  });

  it('organization= with a connection goes straight there; a removed member is refused with a page and an event', async () => {
    const subject = unique('sub');
    const { tenant, connectionId } = await tenantWithConnection({ subject, email: null, emailVerified: false });
    const a = await authorize({ organization: tenant.slug });
    const r = await run(new CookieJar(), a.url, a.redirectUri);
    expect('res' in r).toBe(false);
    const claims = await a.tokens(r.url);
    expect(claims.tenant_id).toBe(tenant.id);
    // Removed: never admitted again by the connection.
    await ownerConnection()('users').where({ tenant_id: tenant.id, subject: claims.sub }).delete();
    await ownerConnection()('member_removals').insert({ tenant_id: tenant.id, issuer: p.issuer, subject: claims.sub, reason: 'removed' });
    const b = await authorize({ organization: tenant.slug });
    const again = await run(new CookieJar(), b.url, b.redirectUri);
    expect('res' in again && again.res.status).toBe(403);
    expect(await (again as { res: Response }).res.text()).toContain('removed');
    const ev = await ownerConnection()('events').where({ tenant_id: tenant.id, action: 'user.sign_in_failed' }).first('data');
    expect(ev.data).toEqual(expect.objectContaining({ reason: 'removed', method: 'sso', connection_id: connectionId }));
  });

  it("a connection's failure shows a reference: the id of the event in the tenant's log", async () => {
    const { tenant, connectionId } = await tenantWithConnection({ subject: unique('sub'), email: null, emailVerified: false });
    p.sso.identities.set(connectionId, null);
    const a = await authorize({ organization: tenant.slug });
    const r = await run(new CookieJar(), a.url, a.redirectUri);
    if (!('res' in r)) throw new Error('expected the error page');
    expect(r.res.status).toBe(400);
    const html = await r.res.text();
    const ref = /Reference: <code>([^<]+)<\/code>/.exec(html)?.[1];
    const ev = await ownerConnection()('events').where({ tenant_id: tenant.id, action: 'user.sign_in_failed' }).first('id', 'data');
    expect(ref).toBe(ev.id);
    expect(ev.data).toEqual(expect.objectContaining({ reason: 'oidc_nonce_mismatch', connection_id: connectionId }));
  });
});

describe('accounts', () => {
  async function emailAccount(email: string): Promise<string> {
    const a = await authorize();
    const jar = new CookieJar();
    const r = await browse(jar, a.url, a.redirectUri);
    if (!('res' in r)) throw new Error('expected the sign-in page');
    const page = r.url.href;
    const before = p.smtp!.messages.filter((m) => m.to.includes(email)).length;
    await jar.post(`${page}/email`, { email });
    const res = await jar.post(`${page}/code`, { code: await mailedCode(p.smtp!, email, before) });
    const back = await browse(jar, new URL(res.headers.get('location')!, p.base), a.redirectUri);
    if ('res' in back) throw new Error('expected the client');
    return (await a.tokens(back.url)).sub;
  }

  async function viaConnection(tenantSlug: string): Promise<string> {
    const a = await authorize({ organization: tenantSlug });
    const r = await run(new CookieJar(), a.url, a.redirectUri);
    if ('res' in r) throw new Error(`stopped at ${r.url.href}: ${r.res.status}`);
    return (await a.tokens(r.url)).sub;
  }

  it('links a connection to the email account only when its tenant verified the email domain and the IdP verified the email', async () => {
    const domain = `${unique('corp')}.test`;
    const email = `lee@${domain}`;
    const sub = await emailAccount(email);
    // Unverified by the IdP: a new account.
    const unverified = await tenantWithConnection({ subject: unique('s'), email, emailVerified: false }, {});
    expect(await viaConnection(unverified.tenant.slug)).not.toBe(sub);
    // Verified by the IdP, but its tenant did not verify the domain: a new account.
    const unverifiedDomain = await tenantWithConnection({ subject: unique('s'), email, emailVerified: true });
    expect(await viaConnection(unverifiedDomain.tenant.slug)).not.toBe(sub);
    // Both: the same person.
    const trusted = await tenantWithConnection({ subject: unique('s'), email, emailVerified: true }, { domain });
    await ownerConnection()('tenant_domains').where({ tenant_id: unverifiedDomain.tenant.id }).delete();
    expect(await viaConnection(trusted.tenant.slug)).toBe(sub);
  });
});

describe('switching organization', () => {
  it('prompt=none with organization= returns a code at once for a member, access_denied otherwise, login_required without a session', async () => {
    const email = `${unique('max')}@example.test`;
    const [one, two, other] = [await createTenant(), await createTenant(), await createTenant()];
    const client = await registerClient(p as never);
    // First sign-in, to learn the account (no organization yet).
    const a = await authorize({}, client);
    const jar = new CookieJar();
    const r = await browse(jar, a.url, a.redirectUri);
    if (!('res' in r)) throw new Error('expected the sign-in page');
    await jar.post(`${r.url.href}/email`, { email });
    const res = await jar.post(`${r.url.href}/code`, { code: await mailedCode(p.smtp!, email) });
    const back = await browse(jar, new URL(res.headers.get('location')!, p.base), a.redirectUri);
    if ('res' in back) throw new Error('expected the client');
    const sub = (await a.tokens(back.url)).sub;
    for (const t of [one, two]) await createUser(t.id, { issuer: p.issuer, subject: sub, email });

    // Into `one` through the pages (the session is alive: no email asked again).
    const b = await authorize({ organization: one.slug }, client);
    const b1 = await browse(jar, b.url, b.redirectUri);
    if ('res' in b1) throw new Error(`stopped at ${b1.url.href} (${b1.res.status}): ${(await b1.res.text()).slice(0, 200)}`);
    expect((await b.tokens(b1.url)).tenant_id).toBe(one.id);

    const c = await authorize({ organization: two.slug, prompt: 'none' }, client);
    const c1 = await browse(jar, c.url, c.redirectUri);
    if ('res' in c1) throw new Error(`stopped at ${c1.url.href} (${c1.res.status})`);
    expect(c1.url.searchParams.get('error')).toBeNull();
    expect((await c.tokens(c1.url)).tenant_id).toBe(two.id);

    const d = await authorize({ organization: other.slug, prompt: 'none' }, client);
    const d1 = await browse(jar, d.url, d.redirectUri);
    expect('res' in d1 ? null : d1.url.searchParams.get('error')).toBe('access_denied');

    const e = await authorize({ organization: two.slug, prompt: 'none' }, client);
    const e1 = await browse(new CookieJar(), e.url, e.redirectUri);
    expect('res' in e1 ? null : e1.url.searchParams.get('error')).toBe('login_required');
  });
});
