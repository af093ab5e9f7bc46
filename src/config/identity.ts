/**
 * Who the callers are: the token provider (local, a shared secret, a JWKS or an OpenID issuer),
 * the claims that name tenants and roles, platform admins, and the console's OpenID sign-in.
 */
import { adminIssuersOf, defaultAdminIssuers } from '../admin-issuers';
import { IDP_PRESETS, isIdpPreset, type IdpPreset } from '../idp-presets';
import type { AuthProvider } from './auth-provider';
import { CLAIM_PATH, type EnvReader } from './env-reader';

export interface AuthConfig {
  readonly jwtTenantClaim: string | null;
  /** SERVICE_JWT_TENANT_ID_CLAIM: the claim (dot path) holding organization ids (docs/identity-providers.md#organization-ids). */
  readonly jwtTenantIdClaim: string | null;
  /** SERVICE_JWT_TENANT_ROLE_CLAIM: the claim (dot path) with the caller's role in the organization. */
  readonly jwtTenantRoleClaim: string | null;
  /** SERVICE_IDP_PRESET: the provider whose token shape set the claim defaults; null: none. */
  readonly idpPreset: IdpPreset | null;
  readonly authProvider: AuthProvider;
  readonly jwtSecret: string | null;
  readonly jwksUri: string | null;
  readonly oidcIssuer: string | null;
  /** SERVICE_CONSOLE_CLIENT_ID: the OpenID client of the console's PKCE sign-in (docs/console.md#an-openid-provider-authorization-code-with-pkce). */
  readonly consoleClientId: string | null;
  /** SERVICE_CONSOLE_SCOPES: the scopes the console asks the OpenID provider for. */
  readonly consoleScopes: string;
  /** SERVICE_CONSOLE_RESOURCE: the `resource` (RFC 8707) the console names on its authorization and token requests; null: none. */
  readonly consoleResource: string | null;
  /** SERVICE_CONSOLE_AUDIENCE: the `audience` the console names on its authorization request (Auth0's API identifier); null: none. */
  readonly consoleAudience: string | null;
  readonly jwtIssuer: string | null;
  readonly jwtAudience: string | null;
  /** Verified tokens remembered until they expire (src/auth/token-cache.ts); 0 (the default): off. */
  readonly jwtCacheSize: number;
  readonly adminRole: string;
  readonly adminRoleClaim: string;
  /**
   * SERVICE_ADMIN_ISSUER: the issuers whose tokens may carry the platform admin role (default:
   * SERVICE_JWT_ISSUER, else the local or OIDC provider's own issuer). Empty: nobody is a
   * platform admin (docs/security.md#platform-admins).
   */
  readonly adminIssuers: readonly string[];
}

export function readAuthConfig(env: EnvReader): AuthConfig {
  const idpPreset = readIdpPreset(env);
  const preset: { tenantClaim?: string; tenantIdClaim?: string; adminRoleClaim?: string; tenantRoleClaim?: string } = idpPreset ? IDP_PRESETS[idpPreset] : {};
  const jwtTenantClaim = env.str('SERVICE_JWT_TENANT_CLAIM') ?? preset.tenantClaim ?? null;
  const jwtTenantIdClaim = env.str('SERVICE_JWT_TENANT_ID_CLAIM') ?? preset.tenantIdClaim ?? null;
  const jwtTenantRoleClaim = env.str('SERVICE_JWT_TENANT_ROLE_CLAIM') ?? preset.tenantRoleClaim ?? null;
  if (jwtTenantRoleClaim !== null && !CLAIM_PATH.test(jwtTenantRoleClaim)) {
    env.problems.push(`SERVICE_JWT_TENANT_ROLE_CLAIM: '${jwtTenantRoleClaim}' is not a claim name or dot path`);
  }
  if (jwtTenantIdClaim !== null && !CLAIM_PATH.test(jwtTenantIdClaim)) {
    env.problems.push(`SERVICE_JWT_TENANT_ID_CLAIM: '${jwtTenantIdClaim}' is not a claim name or dot path`);
  }

  const jwtSecret = env.str('SERVICE_JWT_SECRET');
  if (jwtSecret !== null && Buffer.byteLength(jwtSecret) < 32) {
    env.problems.push('SERVICE_JWT_SECRET: must be at least 32 bytes for HS256');
  }
  const jwksUri = env.url('SERVICE_JWKS_URI', ['http:', 'https:']);
  const oidcIssuer = env.url('SERVICE_OIDC_ISSUER', ['http:', 'https:']);
  const consoleSignIn = readConsoleSignIn(env, oidcIssuer);
  const jwtIssuer = env.str('SERVICE_JWT_ISSUER');
  const jwtAudience = env.str('SERVICE_JWT_AUDIENCE');
  const jwtCacheSize = env.int('SERVICE_JWT_CACHE_SIZE', 0, 1_000_000) ?? 10_000;
  const authProvider = readAuthProvider(env, { jwtSecret, jwksUri, oidcIssuer });

  const adminRole = env.str('SERVICE_ADMIN_ROLE') ?? 'admin';
  const adminRoleClaim = env.str('SERVICE_ADMIN_ROLE_CLAIM') ?? preset.adminRoleClaim ?? 'roles';
  if (!CLAIM_PATH.test(adminRoleClaim)) {
    env.problems.push(`SERVICE_ADMIN_ROLE_CLAIM: '${adminRoleClaim}' is not a claim name or dot path`);
  }
  const adminIssuers = adminIssuersOf(env.text('SERVICE_ADMIN_ISSUER'), env.problems) ?? defaultAdminIssuers(authProvider, jwtIssuer, oidcIssuer);
  return {
    jwtTenantClaim,
    jwtTenantIdClaim,
    jwtTenantRoleClaim,
    idpPreset,
    authProvider,
    jwtSecret,
    jwksUri,
    oidcIssuer,
    ...consoleSignIn,
    jwtIssuer,
    jwtAudience,
    jwtCacheSize,
    adminRole,
    adminRoleClaim,
    adminIssuers: Object.freeze(adminIssuers),
  };
}

function readIdpPreset(env: EnvReader): IdpPreset | null {
  const presetName = env.str('SERVICE_IDP_PRESET');
  if (presetName === null) return null;
  if (isIdpPreset(presetName.toLowerCase())) return presetName.toLowerCase() as IdpPreset;
  env.problems.push(`SERVICE_IDP_PRESET: expected one of ${Object.keys(IDP_PRESETS).join(', ')}, got '${presetName}'`);
  return null;
}

/** SERVICE_CONSOLE_*: sent only by the console's OpenID sign-in, so each needs the client id (and that the issuer). */
function readConsoleSignIn(env: EnvReader, oidcIssuer: string | null): Pick<AuthConfig, 'consoleClientId' | 'consoleScopes' | 'consoleResource' | 'consoleAudience'> {
  const consoleClientId = env.str('SERVICE_CONSOLE_CLIENT_ID');
  if (consoleClientId !== null && !oidcIssuer) env.problems.push('SERVICE_CONSOLE_CLIENT_ID: needs SERVICE_OIDC_ISSUER (the provider the console signs in with)');
  const consoleScopes = (env.str('SERVICE_CONSOLE_SCOPES') ?? 'openid profile email').split(/[\s,]+/).filter(Boolean).join(' ');
  if (!consoleScopes.split(' ').includes('openid')) env.problems.push("SERVICE_CONSOLE_SCOPES: must include 'openid'");
  const consoleResource = env.str('SERVICE_CONSOLE_RESOURCE');
  if (consoleResource !== null && !URL.canParse(consoleResource)) env.problems.push(`SERVICE_CONSOLE_RESOURCE: expected an absolute URI such as https://api.example.com or urn:tenant-api, got '${consoleResource}'`);
  const consoleAudience = env.str('SERVICE_CONSOLE_AUDIENCE');
  for (const [name, v] of [['SERVICE_CONSOLE_RESOURCE', consoleResource], ['SERVICE_CONSOLE_AUDIENCE', consoleAudience]] as const) {
    if (v !== null && consoleClientId === null) env.problems.push(`${name}: needs SERVICE_CONSOLE_CLIENT_ID (it is sent only by the console's OpenID sign-in)`);
  }
  return { consoleClientId, consoleScopes, consoleResource, consoleAudience };
}

/** SERVICE_AUTH_PROVIDER, else the first of oidc / jwks / jwt whose setting is present, else local. */
function readAuthProvider(env: EnvReader, set: { jwtSecret: string | null; jwksUri: string | null; oidcIssuer: string | null }): AuthProvider {
  let authProvider: AuthProvider;
  const ap = env.text('SERVICE_AUTH_PROVIDER');
  if (ap !== undefined) {
    const lower = ap.toLowerCase();
    if (lower === 'local' || lower === 'jwt' || lower === 'jwks' || lower === 'oidc') authProvider = lower;
    else {
      env.problems.push(`SERVICE_AUTH_PROVIDER: expected local, jwt, jwks or oidc, got '${ap}'`);
      authProvider = 'local';
    }
  } else {
    authProvider = set.oidcIssuer ? 'oidc' : set.jwksUri ? 'jwks' : set.jwtSecret ? 'jwt' : 'local';
  }
  if (authProvider === 'jwt' && !set.jwtSecret && !env.reported('SERVICE_JWT_SECRET')) {
    env.problems.push('SERVICE_JWT_SECRET: required when SERVICE_AUTH_PROVIDER is jwt');
  }
  if (authProvider === 'jwks' && !set.jwksUri && !env.reported('SERVICE_JWKS_URI')) {
    env.problems.push('SERVICE_JWKS_URI: required when SERVICE_AUTH_PROVIDER is jwks');
  }
  if (authProvider === 'oidc' && !set.oidcIssuer && !env.reported('SERVICE_OIDC_ISSUER')) {
    env.problems.push('SERVICE_OIDC_ISSUER: required when SERVICE_AUTH_PROVIDER is oidc');
  }
  return authProvider;
}
