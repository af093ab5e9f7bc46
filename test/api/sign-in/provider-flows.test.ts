/**
 * The provider's refusals and sessions (docs/sign-in.md#the-provider): PKCE S256 is required,
 * an unregistered redirect URI gets an error page (never a redirect), a wrong verifier is
 * invalid_grant; a live session signs the person in again without a page, logout ends it; a flow
 * started on one instance continues on another.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { RequestListener } from 'node:http';
import { createTenant, createUser, ownerConnection } from '../../helpers/factories';
import {
  authorizationRequest,
  browse,
  CookieJar,
  createAccount,
  discover,
  openidClient,
  registerClient,
  signIn,
  startProviderApp,
  useProviderApp,
} from './provider-harness';

const p = useProviderApp();


async function member() {
  const tenant = await createTenant();
  const account = await createAccount();
  await createUser(tenant.id, { issuer: p.issuer, subject: account.id, email: account.email });
  return { tenant, account, choice: { accountId: account.id, tenantId: tenant.id, method: 'email' as const, connectionId: null } };
}

describe('refusals', () => {
  it('an authorization request without code_challenge is refused back to the client, state echoed', async () => {
    const { clientId, redirectUri } = await registerClient(p);
    const url = new URL(`${p.issuer}/auth`);
    url.search = new URLSearchParams({ client_id: clientId, redirect_uri: redirectUri, response_type: 'code', scope: 'openid', state: 's-123' }).toString();
    const back = await browse(new CookieJar(), url, redirectUri);
    expect('res' in back).toBe(false);
    expect(back.url.searchParams.get('error')).toBe('invalid_request');
    expect(back.url.searchParams.get('state')).toBe('s-123');
    expect(back.url.searchParams.get('code')).toBeNull();
  });

  it('the plain method is refused', async () => {
    const { clientId, redirectUri } = await registerClient(p);
    const config = await discover(p, clientId);
    const req = await authorizationRequest(config, redirectUri, { code_challenge: 'a'.repeat(43), code_challenge_method: 'plain' });
    const back = await browse(new CookieJar(), req.url, redirectUri);
    expect('res' in back).toBe(false);
    expect(back.url.searchParams.get('error')).toBe('invalid_request');
    expect(back.url.searchParams.get('state')).toBe(req.state);
  });

  it('an unregistered redirect_uri gets an error page, not a redirect', async () => {
    const { clientId } = await registerClient(p);
    const config = await discover(p, clientId);
    const evil = 'https://evil.example/cb';
    const req = await authorizationRequest(config, evil);
    const res = await fetch(req.url, { redirect: 'manual' });
    expect(res.status).toBe(400);
    expect(res.headers.get('location')).toBeNull();
    const html = await res.text();
    expect(html).toContain('redirect_uri');
    expect(html).not.toContain('oops');
    expect(html).not.toContain(evil);
  });

  it('an unknown client gets an error page', async () => {
    const res = await fetch(`${p.issuer}/auth?client_id=nobody&response_type=code&scope=openid&redirect_uri=${encodeURIComponent('https://x.example/cb')}`, { redirect: 'manual' });
    expect(res.status).toBe(400);
    expect(res.headers.get('location')).toBeNull();
  });

  it('a wrong code_verifier is invalid_grant', async () => {
    const oidc = await openidClient();
    const { choice } = await member();
    const { clientId, redirectUri } = await registerClient(p);
    const config = await discover(p, clientId);
    const req = await authorizationRequest(config, redirectUri);
    p.harness.choose = () => choice;
    const back = await browse(new CookieJar(), req.url, redirectUri);
    if ('res' in back) throw new Error('no code');
    await expect(oidc.authorizationCodeGrant(config, back.url, { pkceCodeVerifier: oidc.randomPKCECodeVerifier(), expectedState: req.state, expectedNonce: req.nonce })).rejects.toMatchObject({
      error: 'invalid_grant',
    });
  });

  it('an unknown interaction is an error page', async () => {
    const res = await fetch(`${p.issuer}/interaction/nothing-here`, { redirect: 'manual' });
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toContain('text/html');
  });

  it('a confidential client authenticates with client_secret_basic; a wrong secret is invalid_client', async () => {
    const oidc = await openidClient();
    const { choice } = await member();
    const { clientId, clientSecret, redirectUri } = await registerClient(p, 'confidential');
    const good = await discover(p, clientId, clientSecret);
    const { tokens } = await signIn(p, good, redirectUri, choice);
    expect(tokens.id_token).toEqual(expect.any(String));
    const bad = await discover(p, clientId, `${clientSecret}x`);
    const refused = (await oidc.refreshTokenGrant(bad, tokens.refresh_token!).catch((e: unknown) => e)) as { status?: number; cause?: Array<{ parameters?: { error?: string } }> };
    expect(refused.status).toBe(401);
    expect(refused.cause?.[0]?.parameters?.error).toBe('invalid_client');
  });
});

describe('sessions', () => {
  it('a live session signs in again without a page; logout ends it', async () => {
    const oidc = await openidClient();
    const { choice } = await member();
    const logoutTo = `http://127.0.0.1:9/logged-out-${Date.now()}`;
    const { clientId, redirectUri } = await registerClient(p, 'public', { post_logout_redirect_uris: [logoutTo] });
    const config = await discover(p, clientId);
    const jar = new CookieJar();
    const { tokens } = await signIn(p, config, redirectUri, choice, jar);
    const pages = p.harness.interactions;

    const again = await signIn(p, config, redirectUri, choice, jar);
    expect(p.harness.interactions).toBe(pages);
    expect(again.tokens.claims()!.sub).toBe(choice.accountId);

    const end = oidc.buildEndSessionUrl(config, { id_token_hint: tokens.id_token!, post_logout_redirect_uri: logoutTo, state: 'bye' });
    const confirm = await jar.get(end);
    expect(confirm.status).toBe(200);
    const html = await confirm.text();
    expect(html).toContain('Sign out?');
    expect(html).not.toMatch(/Roboto|googleapis/);
    const action = /<form[^>]*action="([^"]+)"/.exec(html)![1]!;
    const xsrf = /name="xsrf" value="([^"]+)"/.exec(html)![1]!;
    const done = await jar.post(new URL(action, p.base), { xsrf, logout: 'yes' });
    expect(done.status).toBe(303);
    const to = new URL(done.headers.get('location')!);
    expect(`${to.origin}${to.pathname}`).toBe(logoutTo);
    expect(to.searchParams.get('state')).toBe('bye');

    await signIn(p, config, redirectUri, choice, jar);
    expect(p.harness.interactions).toBe(pages + 1);
  });
});

describe('tenants of one session', () => {
  it('the same tenant again needs no page; another tenant (organization) goes through the pages; prompt=none for it is an error, no page', async () => {
    const { tenant, choice } = await member();
    const other = await createTenant();
    await createUser(other.id, { issuer: p.issuer, subject: choice.accountId });
    const { clientId, redirectUri } = await registerClient(p);
    const config = await discover(p, clientId);
    const jar = new CookieJar();
    await signIn(p, config, redirectUri, choice, jar);
    const pages = p.harness.interactions;

    const same = await signIn(p, config, redirectUri, choice, jar, { organization: tenant.slug });
    expect(p.harness.interactions).toBe(pages);
    expect(same.tokens.claims()!.tenant_id).toBe(tenant.id);

    const third = await createTenant();
    const req = await authorizationRequest(config, redirectUri, { organization: third.slug, prompt: 'none' });
    const refused = await browse(jar, req.url, redirectUri);
    if ('res' in refused) throw new Error(`no redirect: ${refused.res.status}`);
    expect(refused.url.searchParams.get('error')).toEqual(expect.any(String));
    expect(refused.url.searchParams.get('code')).toBeNull();
    expect(p.harness.interactions).toBe(pages);

    const switched = await signIn(p, config, redirectUri, { ...choice, tenantId: other.id }, jar, { organization: other.slug });
    expect(p.harness.interactions).toBe(pages + 1);
    expect(switched.tokens.claims()!.tenant_id).toBe(other.id);
    expect(switched.tokens.claims()!.tenant).toBe(other.slug);
  });

  it("a session whose tenant no longer admits the person goes through the pages again", async () => {
    const { tenant, choice } = await member();
    const { clientId, redirectUri } = await registerClient(p);
    const config = await discover(p, clientId);
    const jar = new CookieJar();
    await signIn(p, config, redirectUri, choice, jar);
    const pages = p.harness.interactions;
    await ownerConnection()('users').where({ tenant_id: tenant.id, subject: choice.accountId }).delete();
    const other = await createTenant();
    await createUser(other.id, { issuer: p.issuer, subject: choice.accountId });
    const again = await signIn(p, config, redirectUri, { ...choice, tenantId: other.id }, jar);
    expect(p.harness.interactions).toBe(pages + 1);
    expect(again.tokens.claims()!.tenant_id).toBe(other.id);
  });
});

describe('proxies', () => {
  it('X-Forwarded-Proto counts only from a trusted proxy', async () => {
    const { clientId, redirectUri } = await registerClient(p);
    const config = await discover(p, clientId);
    const req = await authorizationRequest(config, redirectUri);
    const untrusted = await fetch(req.url, { redirect: 'manual', headers: { 'x-forwarded-proto': 'https' } });
    expect(untrusted.status).toBe(303);
    expect(untrusted.headers.getSetCookie().join('\n')).not.toMatch(/;\s*secure/i);

    const proxied = await startProviderApp({ SERVICE_TRUST_PROXY: 'loopback' });
    try {
      const { clientId: id2, redirectUri: uri2 } = await registerClient(proxied);
      const req2 = await authorizationRequest(await discover(proxied, id2), uri2);
      const trusted = await fetch(req2.url, { redirect: 'manual', headers: { 'x-forwarded-proto': 'https' } });
      expect(trusted.status).toBe(303);
      const cookies = trusted.headers.getSetCookie();
      expect(cookies.length).toBeGreaterThan(0);
      for (const c of cookies) expect(c).toMatch(/;\s*secure/i);
    } finally {
      await proxied.close();
    }
  });
});

describe('instances', () => {
  it('a flow started on one instance continues on another', async () => {
    const oidc = await openidClient();
    // One public address, two app instances behind it (a load balancer switching between them).
    let active: RequestListener = () => undefined;
    const server = http.createServer((req, res) => active(req, res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const env = { SERVICE_PUBLIC_URL: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
    const a = await startProviderApp(env, { server });
    const b = await startProviderApp(env, { server });
    const appA = a.app as unknown as RequestListener;
    const appB = b.app as unknown as RequestListener;
    try {
      const tenant = await createTenant();
      const account = await createAccount();
      await createUser(tenant.id, { issuer: a.issuer, subject: account.id, email: account.email });
      const choice = { accountId: account.id, tenantId: tenant.id, method: 'email' as const, connectionId: null };
      const { clientId, redirectUri } = await registerClient(a);
      active = appA;
      const config = await discover(a, clientId);
      const req = await authorizationRequest(config, redirectUri);
      const jar = new CookieJar();
      // A: the authorization request, to the sign-in page's address.
      const first = await jar.get(req.url);
      expect(first.status).toBe(303);
      const page = new URL(first.headers.get('location')!, a.base);
      expect(page.pathname).toMatch(/^\/oidc\/interaction\//);
      // B: the page, the resume, the code exchange and a refresh.
      active = appB;
      b.harness.choose = () => choice;
      const back = await browse(jar, page, redirectUri);
      if ('res' in back) throw new Error(`stopped at ${back.url.href}: ${back.res.status}`);
      expect(a.harness.interactions).toBe(0);
      expect(b.harness.interactions).toBe(1);
      const tokens = await oidc.authorizationCodeGrant(config, back.url, { pkceCodeVerifier: req.verifier, expectedState: req.state, expectedNonce: req.nonce });
      expect(tokens.claims()!.tenant_id).toBe(tenant.id);
      // A again: the refresh token B issued.
      active = appA;
      const refreshed = await oidc.refreshTokenGrant(config, tokens.refresh_token!);
      expect(refreshed.claims()!.sub).toBe(choice.accountId);
    } finally {
      await a.close();
      await b.close();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
