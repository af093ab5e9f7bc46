/**
 * The OIDC side of a tenant's connection (docs/sso.md#oidc), with openid-client 6: discovery
 * of the issuer (its `issuer` must equal the configured one), the authorization URL with PKCE
 * S256, `state` and `nonce`, and the code exchange whose ID token is checked for issuer,
 * audience, nonce, expiry and — `enableNonRepudiationChecks` — its signature by the issuer's
 * JWKS. Every request goes through the guarded fetch (src/domain/sso/network.ts).
 */
import type * as OpenIdClient from 'openid-client' with { 'resolution-mode': 'import' };
import { guardedFetch, type NetworkPolicy } from './network';

type Client = typeof OpenIdClient;
let loaded: Promise<Client> | null = null;
const client = (): Promise<Client> => (loaded ??= import('openid-client'));

const CACHE_MS = 10 * 60_000;
const CACHE_MAX = 1000;
const cache = new Map<string, { at: number; config: OpenIdClient.Configuration }>();

export interface OidcConnectionConfig {
  readonly connectionId: string;
  /** Changes when the connection does (its updated_at): a cached configuration of an older version is not used. */
  readonly version: string;
  readonly issuer: string;
  readonly clientId: string;
  readonly clientSecret: string;
}

async function discover(issuer: string, clientId: string, clientSecret: string | undefined, policy: NetworkPolicy): Promise<OpenIdClient.Configuration> {
  const oc = await client();
  const execute = [oc.enableNonRepudiationChecks, ...(policy.allowPrivateNetworks ? [oc.allowInsecureRequests] : [])];
  const config = await oc.discovery(new URL(issuer), clientId, clientSecret, oc.ClientSecretBasic(clientSecret), {
    [oc.customFetch]: guardedFetch(policy) as OpenIdClient.CustomFetch,
    execute,
    timeout: 5,
  });
  const m = config.serverMetadata();
  if (!m.jwks_uri) throw new Error('the discovery document has no jwks_uri (its ID tokens could not be verified)');
  if (!m.authorization_endpoint || !m.token_endpoint) throw new Error('the discovery document lacks authorization_endpoint or token_endpoint');
  const methods = m.token_endpoint_auth_methods_supported;
  if (methods && !methods.includes('client_secret_basic') && methods.includes('client_secret_post')) {
    const post = new oc.Configuration(m, clientId, clientSecret, oc.ClientSecretPost(clientSecret));
    post[oc.customFetch] = guardedFetch(policy) as OpenIdClient.CustomFetch;
    for (const f of execute) f(post);
    return post;
  }
  return config;
}

/** Discovery of an issuer when a connection is created: throws naming what failed. */
export async function checkIssuer(issuer: string, policy: NetworkPolicy): Promise<void> {
  try {
    await discover(issuer, 'discovery-check', undefined, policy);
  } catch (err) {
    throw new Error(describeOidcError(err));
  }
}

/** A sentence for a failure of openid-client or of the network (no secrets: none are in its messages). */
export function describeOidcError(err: unknown): string {
  const e = err as { message?: string; code?: string; cause?: unknown; error?: string; error_description?: string };
  if (e?.error) return `${e.error}${e.error_description ? `: ${e.error_description}` : ''}`.slice(0, 300);
  const cause = e?.cause as { message?: string } | undefined;
  const msg = [e?.message, cause && typeof cause === 'object' && cause.message && cause.message !== e?.message ? cause.message : null].filter(Boolean).join(': ');
  return (msg || String(err)).slice(0, 300);
}

async function configFor(c: OidcConnectionConfig, policy: NetworkPolicy): Promise<OpenIdClient.Configuration> {
  const key = `${c.connectionId}|${c.version}|${policy.allowPrivateNetworks}`;
  const hit = cache.get(key);
  if (hit && Date.now() - hit.at < CACHE_MS) return hit.config;
  const config = await discover(c.issuer, c.clientId, c.clientSecret, policy);
  for (const k of cache.keys()) if (k.startsWith(`${c.connectionId}|`) || cache.size >= CACHE_MAX) cache.delete(k);
  cache.set(key, { at: Date.now(), config });
  return config;
}

/** The authorization URL and the one-time values the callback needs. */
export async function authorizationRequest(
  c: OidcConnectionConfig,
  policy: NetworkPolicy,
  opts: { redirectUri: string; scopes: readonly string[]; loginHint: string | null },
): Promise<{ url: URL; state: string; nonce: string; codeVerifier: string }> {
  const oc = await client();
  const config = await configFor(c, policy);
  const codeVerifier = oc.randomPKCECodeVerifier();
  const state = oc.randomState();
  const nonce = oc.randomNonce();
  const params: Record<string, string> = {
    redirect_uri: opts.redirectUri,
    scope: opts.scopes.join(' '),
    response_type: 'code',
    code_challenge: await oc.calculatePKCECodeChallenge(codeVerifier),
    code_challenge_method: 'S256',
    state,
    nonce,
  };
  if (opts.loginHint) params.login_hint = opts.loginHint;
  return { url: oc.buildAuthorizationUrl(config, params), state, nonce, codeVerifier };
}

const stripNull = (o: object) => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined && v !== null));

export interface IdTokenClaims {
  readonly iss: string;
  readonly sub: string;
  readonly email: string | null;
  readonly emailVerified: boolean;
  readonly name: string | null;
}

/** Exchanges the code of `callbackUrl` and checks the ID token; throws on any failure (openid-client's error or the network's). */
export async function exchangeCode(c: OidcConnectionConfig, policy: NetworkPolicy, callbackUrl: URL, checks: { state: string; nonce: string; codeVerifier: string }): Promise<IdTokenClaims> {
  const oc = await client();
  const config = await configFor(c, policy);
  const tokens = await oc.authorizationCodeGrant(config, callbackUrl, { expectedState: checks.state, expectedNonce: checks.nonce, pkceCodeVerifier: checks.codeVerifier, idTokenExpected: true });
  const claims = tokens.claims();
  if (!claims) throw new Error('the token response has no ID token');
  const str = (v: unknown) => (typeof v === 'string' && v !== '' ? v : null);
  let source: Record<string, unknown> = claims;
  // Some providers put `email` only in the UserInfo answer (scope claims with an access token): ask it, for this subject.
  if (str(claims.email) === null && config.serverMetadata().userinfo_endpoint && tokens.access_token) {
    source = { ...(await oc.fetchUserInfo(config, tokens.access_token, claims.sub)), ...stripNull(claims) };
  }
  return {
    iss: claims.iss,
    sub: claims.sub,
    email: str(source.email)?.toLowerCase() ?? null,
    emailVerified: source.email_verified === true || source.email_verified === 'true',
    name: str(source.name),
  };
}
