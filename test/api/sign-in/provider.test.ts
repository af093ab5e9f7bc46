/**
 * The service's own OpenID provider (docs/sign-in.md#the-provider), driven by the product's
 * client library (openid-client 6) over real HTTP: discovery, the authorization code flow with
 * PKCE, the tokens' claims.
 */
import { createTenant, createUser } from '../../helpers/factories';
import crypto from 'node:crypto';
import { authorizationRequest, browse, CookieJar, createAccount, discover, openidClient, payloadOf, registerClient, signIn, useProviderApp } from './provider-harness';

const p = useProviderApp();


describe('discovery', () => {
  it('describes the provider at <SERVICE_PUBLIC_URL>/oidc', async () => {
    const res = await fetch(`${p.issuer}/.well-known/openid-configuration`);
    expect(res.status).toBe(200);
    const doc = (await res.json()) as Record<string, unknown>;
    expect(doc.issuer).toBe(p.issuer);
    expect(doc.jwks_uri).toBe(`${p.issuer}/jwks`);
    expect(doc.authorization_endpoint).toBe(`${p.issuer}/auth`);
    expect(doc.token_endpoint).toBe(`${p.issuer}/token`);
    expect(doc.code_challenge_methods_supported).toEqual(['S256']);
    expect(doc.response_types_supported).toEqual(['code']);
    expect(doc.end_session_endpoint).toBe(`${p.issuer}/session/end`);
    // Outside the API: a malformed X-Tenant or a bad bearer token changes nothing here.
    const outside = await fetch(`${p.issuer}/.well-known/openid-configuration`, { headers: { 'x-tenant': 'NOT A SLUG!', authorization: 'Bearer nonsense' } });
    expect(outside.status).toBe(200);
    expect(outside.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    const missing = await fetch(`${p.issuer}/no-such-endpoint`);
    expect(missing.status).toBe(404);
    expect(missing.headers.get('content-type')).not.toContain('application/problem');
    const jwks = (await (await fetch(String(doc.jwks_uri))).json()) as { keys: Array<Record<string, unknown>> };
    expect(jwks.keys.length).toBeGreaterThanOrEqual(1);
    for (const k of jwks.keys) {
      expect(k).toEqual(expect.objectContaining({ kty: 'RSA', alg: 'RS256', use: 'sig' }));
      expect(k).not.toHaveProperty('d');
    }
  });
});

describe('authorization code with PKCE', () => {
  it('signs a member in: ID token and JWT access token carry the account and the tenant', async () => {
    const oidc = await openidClient();
    const tenant = await createTenant();
    const account = await createAccount();
    await createUser(tenant.id, { issuer: p.issuer, subject: account.id, email: account.email, role: 'admin' });
    const { clientId, redirectUri } = await registerClient(p);
    const config = await discover(p, clientId);
    const { url, verifier, state, nonce } = await authorizationRequest(config, redirectUri);
    p.harness.choose = () => ({ accountId: account.id, tenantId: tenant.id, method: 'email', connectionId: null });
    const jar = new CookieJar();
    const back = await browse(jar, url, redirectUri);
    expect('res' in back).toBe(false);
    expect(back.url.searchParams.get('state')).toBe(state);

    const tokens = await oidc.authorizationCodeGrant(config, back.url, { pkceCodeVerifier: verifier, expectedState: state, expectedNonce: nonce });
    const id = tokens.claims()!;
    expect(id.iss).toBe(p.issuer);
    expect(id.aud).toBe(clientId);
    expect(id.sub).toBe(account.id);
    expect(id.nonce).toBe(nonce);
    expect(id).toEqual(expect.objectContaining({ email: account.email, email_verified: true, name: account.name, tenant_id: tenant.id, tenant: tenant.slug, tenant_role: 'admin' }));
    expect(Array.isArray(id.permissions)).toBe(true);
    expect(id.permissions).toEqual([...(id.permissions as string[])].sort());
    expect(id).not.toHaveProperty('sso_connection_id');
    expect(typeof tokens.refresh_token).toBe('string');

    const [header, payload] = tokens.access_token.split('.').slice(0, 2).map((s) => JSON.parse(Buffer.from(s, 'base64url').toString('utf8')) as Record<string, unknown>);
    expect(header).toEqual(expect.objectContaining({ alg: 'RS256', typ: 'at+jwt' }));
    expect(payload).toEqual(expect.objectContaining({ iss: p.issuer, sub: account.id, aud: `${p.base}/api`, client_id: clientId, tenant_id: tenant.id, tenant: tenant.slug, tenant_role: 'admin', email: account.email }));
    expect(payload!.permissions).toEqual(id.permissions);
  });

  it('names the SSO connection the person came through', async () => {
    const tenant = await createTenant();
    const account = await createAccount();
    await createUser(tenant.id, { issuer: p.issuer, subject: account.id, email: account.email });
    const { clientId, redirectUri } = await registerClient(p);
    const connectionId = crypto.randomUUID();
    const { tokens } = await signIn(p, await discover(p, clientId), redirectUri, { accountId: account.id, tenantId: tenant.id, method: 'sso', connectionId });
    expect(tokens.claims()!.sso_connection_id).toBe(connectionId);
    expect(payloadOf(tokens.access_token).sso_connection_id).toBe(connectionId);
  });

  it('without a tenant, the tokens carry no tenant claims', async () => {
    const account = await createAccount();
    const { clientId, redirectUri } = await registerClient(p);
    const { tokens } = await signIn(p, await discover(p, clientId), redirectUri, { accountId: account.id, tenantId: null, method: 'email', connectionId: null });
    for (const claim of ['tenant_id', 'tenant', 'tenant_role', 'permissions', 'sso_connection_id']) {
      expect(tokens.claims()).not.toHaveProperty(claim);
      expect(payloadOf(tokens.access_token)).not.toHaveProperty(claim);
    }
    expect(tokens.claims()!.sub).toBe(account.id);
  });

  it('a sign-in as an account that does not exist is access_denied', async () => {
    const { clientId, redirectUri } = await registerClient(p);
    const req = await authorizationRequest(await discover(p, clientId), redirectUri);
    p.harness.choose = () => ({ accountId: crypto.randomUUID(), tenantId: null, method: 'email', connectionId: null });
    const back = await browse(new CookieJar(), req.url, redirectUri);
    if ('res' in back) throw new Error(`no redirect: ${back.res.status}`);
    expect(back.url.searchParams.get('error')).toBe('access_denied');
    expect(back.url.searchParams.get('code')).toBeNull();
  });
});
