/**
 * The provider's sign-in pages (docs/sign-in.md#the-sign-in-page, #organizations), driven by the
 * product's client (openid-client 6) over real HTTP with a browser's cookie jar: a code by mail
 * (a real SMTP server), the organization chosen, home realm discovery to a tenant's connection,
 * and every refusal as a page or a protocol error.
 */
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

async function authorize(extra: Record<string, string> = {}) {
  const oidc = await openidClient();
  const { clientId, redirectUri } = await registerClient(p as never);
  const config = await oidc.discovery(new URL(p.issuer), clientId, undefined, oidc.None(), { execute: [oidc.allowInsecureRequests] });
  const verifier = oidc.randomPKCECodeVerifier();
  const state = oidc.randomState();
  const url = oidc.buildAuthorizationUrl(config, {
    redirect_uri: redirectUri,
    scope: 'openid email profile',
    code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state,
    ...extra,
  });
  return { oidc, config, verifier, state, url, redirectUri };
}

/** Opens the sign-in page: its interaction's base URL. */
async function openPage(jar: CookieJar, url: URL, redirectUri: string): Promise<{ res: Response; url: URL; html: string }> {
  const r = await browse(jar, url, redirectUri);
  if (!('res' in r)) throw new Error(`no page: went to ${r.url.href}`);
  return { res: r.res, url: r.url, html: await r.res.text() };
}

const form = (jar: CookieJar, url: string, fields: Record<string, string>) => jar.post(url, fields);

async function signInByEmail(email: string, extra: Record<string, string> = {}) {
  const a = await authorize(extra);
  const jar = new CookieJar();
  const page = await openPage(jar, a.url, a.redirectUri);
  expect(page.res.status).toBe(200);
  expect(page.html).toContain('name="email"');
  const before = p.smtp!.messages.filter((m) => m.to.includes(email)).length;
  const sent = await form(jar, `${page.url.href}/email`, { email });
  expect(sent.status).toBe(200);
  const code = await mailedCode(p.smtp!, email, before);
  const res = await form(jar, `${page.url.href}/code`, { code });
  return { a, jar, page, res };
}

async function landAt(jar: CookieJar, res: Response, redirectUri: string): Promise<URL> {
  expect(res.status).toBe(303);
  const r = await browse(jar, new URL(res.headers.get('location')!, p.base), redirectUri);
  if ('res' in r) throw new Error(`stopped at ${r.url.href} (${r.res.status}): ${(await r.res.text()).slice(0, 300)}`);
  return r.url;
}

describe('a code by mail', () => {
  it('signs a member of one tenant straight into it; the tokens name the account and the tenant', async () => {
    const tenant = await createTenant();
    const email = `${unique('ann')}@example.test`;
    const s1 = await signInByEmail(email);
    // Not a member anywhere yet: signed in without an organization. Its account now exists.
    const back1 = await landAt(s1.jar, s1.res, s1.a.redirectUri);
    const t1 = await s1.a.oidc.authorizationCodeGrant(s1.a.config, back1, { pkceCodeVerifier: s1.a.verifier, expectedState: s1.a.state });
    const sub = t1.claims()!.sub;
    expect(t1.claims()).toEqual(expect.objectContaining({ email, email_verified: true }));
    expect(t1.claims()).not.toHaveProperty('tenant_id');

    await createUser(tenant.id, { issuer: p.issuer, subject: sub, email, role: 'member' });
    const s2 = await signInByEmail(email);
    const back2 = await landAt(s2.jar, s2.res, s2.a.redirectUri);
    const t2 = await s2.a.oidc.authorizationCodeGrant(s2.a.config, back2, { pkceCodeVerifier: s2.a.verifier, expectedState: s2.a.state });
    expect(t2.claims()).toEqual(expect.objectContaining({ sub, tenant_id: tenant.id, tenant: tenant.slug, tenant_role: 'member' }));
    const ev = await ownerConnection()('events').where({ tenant_id: tenant.id, action: 'user.signed_in' }).first('data');
    expect(ev.data).toEqual(expect.objectContaining({ account_id: sub, method: 'email', connection_id: null }));
    // No code in the event: nothing of eight digits outside the account's id.
    expect(JSON.stringify({ ...ev.data, account_id: null })).not.toMatch(/\d{8}/);
  });

  it('lists several organizations to choose from, and lands at the client with a code', async () => {
    const [one, two] = [await createTenant(), await createTenant()];
    const email = `${unique('bo')}@example.test`;
    const s0 = await signInByEmail(email);
    const back0 = await landAt(s0.jar, s0.res, s0.a.redirectUri);
    const sub = (await s0.a.oidc.authorizationCodeGrant(s0.a.config, back0, { pkceCodeVerifier: s0.a.verifier, expectedState: s0.a.state })).claims()!.sub;
    for (const t of [one, two]) await createUser(t.id, { issuer: p.issuer, subject: sub, email, role: 'member' });

    const s = await signInByEmail(email);
    expect(s.res.status).toBe(200);
    const html = await s.res.text();
    expect(html).toContain(one.slug);
    expect(html).toContain(two.slug);
    const chosen = await form(s.jar, `${s.page.url.href}/organization`, { organization: two.slug });
    const back = await landAt(s.jar, chosen, s.a.redirectUri);
    const t = await s.a.oidc.authorizationCodeGrant(s.a.config, back, { pkceCodeVerifier: s.a.verifier, expectedState: s.a.state });
    expect(t.claims()).toEqual(expect.objectContaining({ sub, tenant_id: two.id }));

    // organization= given but not a member: access_denied back to the client.
    const other = await createTenant();
    const d = await signInByEmail(email, { organization: other.slug });
    const denied = await landAt(d.jar, d.res, d.a.redirectUri);
    expect(denied.searchParams.get('error')).toBe('access_denied');
  });

  it('refuses a wrong code five times, then the code is dead; never a 500', async () => {
    const email = `${unique('cy')}@example.test`;
    const a = await authorize();
    const jar = new CookieJar();
    const page = await openPage(jar, a.url, a.redirectUri);
    await form(jar, `${page.url.href}/email`, { email });
    const code = await mailedCode(p.smtp!, email);
    const wrong = code === '00000000' ? '11111111' : '00000000';
    for (let i = 4; i >= 1; i--) {
      const r = await form(jar, `${page.url.href}/code`, { code: wrong });
      expect(r.status).toBe(400);
      expect(await r.text()).toContain(`${i} ${i === 1 ? 'try' : 'tries'} left`);
    }
    const fifth = await form(jar, `${page.url.href}/code`, { code: wrong });
    expect(await fifth.text()).toContain('Too many wrong codes');
    const late = await form(jar, `${page.url.href}/code`, { code });
    expect(late.status).toBe(400);
    expect(await late.text()).toContain('no longer valid');
    for (const body of [{}, { code: 'x'.repeat(5000) }, { code: ['1', '2'] as unknown as string }]) {
      expect((await form(jar, `${page.url.href}/code`, body as Record<string, string>)).status).toBe(400);
    }
  });

  it('refuses an expired code', async () => {
    const email = `${unique('dee')}@example.test`;
    const a = await authorize();
    const jar = new CookieJar();
    const page = await openPage(jar, a.url, a.redirectUri);
    await form(jar, `${page.url.href}/email`, { email });
    const code = await mailedCode(p.smtp!, email);
    await ownerConnection()('sign_in_email_codes').where({ email }).update({ created_at: ownerConnection().raw("now() - interval '11 minutes'"), expires_at: ownerConnection().raw("now() - interval '1 minute'") });
    const r = await form(jar, `${page.url.href}/code`, { code });
    expect(r.status).toBe(400);
    expect(await r.text()).toContain('expired');
  });

  it('mails at most 5 codes per email in 15 minutes', async () => {
    const email = `${unique('eve')}@example.test`;
    const a = await authorize();
    const jar = new CookieJar();
    const page = await openPage(jar, a.url, a.redirectUri);
    for (let i = 0; i < 5; i++) expect((await form(jar, `${page.url.href}/email`, { email })).status).toBe(200);
    const sixth = await form(jar, `${page.url.href}/email`, { email });
    expect(sixth.status).toBe(429);
    expect(await sixth.text()).toContain('Too many codes');
    expect(p.smtp!.messages.filter((m) => m.to.includes(email))).toHaveLength(5);
  });
});

describe('refusals', () => {
  it('a removed member, a suspended tenant and a tenant requiring SSO are refused; each writes user.sign_in_failed', async () => {
    const email = `${unique('fay')}@example.test`;
    const s0 = await signInByEmail(email);
    const back0 = await landAt(s0.jar, s0.res, s0.a.redirectUri);
    const sub = (await s0.a.oidc.authorizationCodeGrant(s0.a.config, back0, { pkceCodeVerifier: s0.a.verifier, expectedState: s0.a.state })).claims()!.sub;
    const removedFrom = await createTenant();
    await ownerConnection()('member_removals').insert({ tenant_id: removedFrom.id, issuer: p.issuer, subject: sub, reason: 'removed' });
    const suspended = await createTenant();
    await createUser(suspended.id, { issuer: p.issuer, subject: sub, email });
    await ownerConnection()('tenants').where({ id: suspended.id }).update({ status: 'suspended' });
    const strict = await createTenant();
    await createUser(strict.id, { issuer: p.issuer, subject: sub, email });
    p.sso.tenants.set(strict.id, { ssoRequired: true, connection: null });

    for (const [t, reason] of [[removedFrom, 'removed'], [suspended, 'tenant_unavailable'], [strict, 'sso_required']] as const) {
      const s = await signInByEmail(email, { organization: t.slug });
      const back = await landAt(s.jar, s.res, s.a.redirectUri);
      expect(back.searchParams.get('error')).toBe('access_denied');
      const ev = await ownerConnection()('events').where({ tenant_id: t.id, action: 'user.sign_in_failed' }).first('data');
      expect(ev?.data).toEqual(expect.objectContaining({ reason, method: 'email' }));
    }
    // Without organization=: the tenant requiring SSO (no active connection) is not offered, the rest are not either.
    const s = await signInByEmail(email);
    const back = await landAt(s.jar, s.res, s.a.redirectUri);
    expect(back.searchParams.get('code')).toBeTruthy();
  });

  it('bad input gets a page: unknown interaction, no cookie, a foreign origin, a 10 MB body', async () => {
    const a = await authorize();
    const jar = new CookieJar();
    const page = await openPage(jar, a.url, a.redirectUri);
    expect((await fetch(`${p.issuer}/interaction/nope`)).status).toBe(400);
    expect((await fetch(`${p.issuer}/interaction/${'x'.repeat(300)}`)).status).toBe(404);
    expect((await fetch(`${page.url.href}/email`, { method: 'POST', body: 'email=a@b.test', headers: { 'content-type': 'application/x-www-form-urlencoded' } })).status).toBe(400);
    const foreign = await fetch(`${page.url.href}/email`, { method: 'POST', body: 'email=a@b.test', headers: { cookie: jar.header(), origin: 'https://evil.example', 'content-type': 'application/x-www-form-urlencoded' } });
    expect(foreign.status).toBe(403);
    const crossSite = await fetch(`${page.url.href}/email`, { method: 'POST', body: 'email=a@b.test', headers: { cookie: jar.header(), 'sec-fetch-site': 'cross-site', 'content-type': 'application/x-www-form-urlencoded' } });
    expect(crossSite.status).toBe(403);
    const big = await fetch(`${page.url.href}/email`, { method: 'POST', body: `email=${'a'.repeat(10 * 1024 * 1024)}`, headers: { cookie: jar.header(), 'content-type': 'application/x-www-form-urlencoded' } });
    expect(big.status).toBe(413);
    const html = await big.text();
    expect(html).not.toMatch(/at .*\.js:\d+/);
    const garbled = await jar.post(`${page.url.href}/email`, { email: 'not an email' });
    expect(garbled.status).toBe(400);
    expect(garbled.headers.get('content-security-policy')).toContain("default-src 'none'");
  });
});
