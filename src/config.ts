/**
 * Configuration: the only module that reads process.env. Parsed once at boot into a frozen,
 * typed Config; every bad variable is reported in one message.
 */
import path from 'node:path';
import { adminIssuersOf, defaultAdminIssuers } from './admin-issuers';
import { IDP_PRESETS, isIdpPreset, type IdpPreset } from './idp-presets';
import { parseTrustProxy, type TrustProxy } from './trust-proxy';

export type AuthProvider = 'local' | 'jwt' | 'jwks' | 'oidc';
export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

export interface Config {
  readonly port: number;
  readonly host: string;
  readonly multiTenantMode: boolean;
  readonly jwtTenantClaim: string | null;
  /** SERVICE_JWT_TENANT_ID_CLAIM: the claim (dot path) holding organization ids (docs/identity-providers.md#organization-ids). */
  readonly jwtTenantIdClaim: string | null;
  /** SERVICE_JWT_TENANT_ROLE_CLAIM: the claim (dot path) with the caller's role in the organization. */
  readonly jwtTenantRoleClaim: string | null;
  /** SERVICE_IDP_PRESET: the provider whose token shape set the claim defaults; null: none. */
  readonly idpPreset: IdpPreset | null;
  readonly registrationRequiresApproval: boolean;
  readonly registrationAllowedDomains: readonly string[] | null;
  readonly maxTenantsPerUser: number | null;
  readonly frontendBaseUrl: string | null;
  /** SERVICE_PUBLIC_URL: where clients reach this service (the SCIM base URL shown to tenant admins); null: the tenant token issuer. */
  readonly publicUrl: string | null;
  readonly logLevel: LogLevel;
  readonly databaseUrl: string | null;
  /** Where migrations run (SERVICE_MIGRATION_DATABASE_URL); null: databaseUrl. A direct connection when databaseUrl is a transaction pooler. */
  readonly migrationDatabaseUrl: string | null;
  readonly dataDir: string;
  readonly redisUrl: string | null;
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
  /** Prepare the hot statements once per connection (false behind a pooler that drops them). */
  readonly databasePreparedStatements: boolean;
  /** SERVICE_DATABASE_LISTEN_URL: a direct (session) connection for change notifications; null: databaseUrl. */
  readonly databaseListenUrl: string | null;
  /** SERVICE_DECISION_CACHE_ENTRIES: decisions' facts kept in memory (docs/architecture.md "Decisions from memory"); 0: off. */
  readonly decisionCacheEntries: number;
  /** SERVICE_DATABASE_QUERY_TIMEOUT_MS: how long a request waits for a pooled connection or a query's answer before its 503. */
  readonly databaseQueryTimeoutMs: number;
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
  readonly defaultTenantSlug: string;
  readonly rateLimitEnabled: boolean;
  /** SERVICE_RATE_LIMIT_DECISION_PER_MINUTE: the `decision` counter's limit; null: the contract's (6 000). */
  readonly rateLimitDecisionPerMinute: number | null;
  readonly redisKeyPrefix: string;
  /** SERVICE_TRUST_PROXY: the proxies whose X-Forwarded-For entries count (src/trust-proxy.ts). */
  readonly trustProxy: TrustProxy;
  readonly graphqlPath: string;
  /** SERVICE_EVENT_RETENTION_DAYS: how long audit-log events are kept (daily purge). */
  readonly eventRetentionDays: number;
  /** SERVICE_IMPORT_MAX_BYTES: the largest tenant import body accepted (413 beyond). */
  readonly importMaxBytes: number;
  /** SERVICE_WEBHOOK_ALLOW_PRIVATE_NETWORKS: webhook URLs may reach loopback/private/link-local addresses. */
  readonly webhookAllowPrivateNetworks: boolean;
  /** SERVICE_DECISION_TENANT_TOKEN: the gateway decision also hands the product a tenant token (X-Tenant-Token). */
  readonly decisionTenantToken: boolean;
  /** SERVICE_EVENT_SETTINGS_KEYS: the tenant settings / registration metadata keys whose values events copy. */
  readonly eventSettingsKeys: readonly string[];
  /** Slugs self-service registration may never take (the default tenant's slug is added). */
  readonly reservedSlugs: readonly string[];
  /** Days a deleted tenant's slug stays unavailable to self-service registration. */
  readonly slugRetirementDays: number;
  /** Lifetime of an invitation, in hours. */
  readonly invitationTtlHours: number;
  /** SMTP server for invitation mail; null: no mail is sent. */
  readonly smtpUrl: string | null;
  /** Sender of invitation mail (required with smtpUrl). */
  readonly mailFrom: string | null;
  /** When set, GET /metrics requires `Authorization: Bearer <this token>`. */
  readonly metricsToken: string | null;
  /** `iss` of tenant tokens (SERVICE_TENANT_TOKEN_ISSUER; default http://SERVICE_HOST:SERVICE_PORT). */
  readonly tenantTokenIssuer: string;
  /** `aud` of tenant tokens (SERVICE_TENANT_TOKEN_AUDIENCE). */
  readonly tenantTokenAudience: string;
  /** Lifetime of a tenant token in seconds (SERVICE_TENANT_TOKEN_TTL, at most 3600). */
  readonly tenantTokenTtlSeconds: number;
  /** Encrypts the tenant-token private keys at rest (SERVICE_KEY_ENCRYPTION_SECRET); null: stored plain. */
  readonly keyEncryptionSecret: string | null;
}

/** Thrown when one or more variables are invalid; the message names each of them. */
export class ConfigError extends Error {
  constructor(readonly problems: readonly string[]) {
    super(`Invalid configuration:\n  - ${problems.join('\n  - ')}`);
    this.name = 'ConfigError';
  }
}

type Env = Readonly<Record<string, string | undefined>>;

const TRUE = new Set(['true', '1', 'yes', 'on']);
const FALSE = new Set(['false', '0', 'no', 'off']);
const SLUG = /^[a-z0-9-]+$/;
const LOG_LEVELS: readonly LogLevel[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

/** Parses the environment (default: process.env) into a Config, or throws one ConfigError. */
export function loadConfig(env: Env = process.env): Config {
  const problems: string[] = [];
  const raw = (name: string): string | undefined => {
    const v = env[name];
    return v === undefined || v.trim() === '' ? undefined : v.trim();
  };
  const bool = (name: string, dflt: boolean): boolean => {
    const v = raw(name);
    if (v === undefined) return dflt;
    const lower = v.toLowerCase();
    if (TRUE.has(lower)) return true;
    if (FALSE.has(lower)) return false;
    problems.push(`${name}: expected true/false/1/0/yes/no, got '${v}'`);
    return dflt;
  };
  const int = (name: string, min: number, max: number): number | null => {
    const v = raw(name);
    if (v === undefined || v.toLowerCase() === 'null') return null;
    if (!/^\d+$/.test(v) || Number(v) < min || Number(v) > max) {
      problems.push(`${name}: expected an integer from ${min} to ${max}, got '${v}'`);
      return null;
    }
    return Number(v);
  };
  const url = (name: string, protocols: readonly string[]): string | null => {
    const v = raw(name);
    if (v === undefined) return null;
    try {
      const u = new URL(v);
      if (!protocols.includes(u.protocol)) throw new Error('protocol');
      return v;
    } catch {
      problems.push(`${name}: expected a ${protocols.join(' or ')} URL, got '${redactUrl(v)}'`);
      return null;
    }
  };
  const str = (name: string): string | null => raw(name) ?? null;
  const list = (name: string): string[] | null => {
    const v = raw(name);
    if (v === undefined || v.toLowerCase() === 'null') return null;
    let items: unknown;
    if (v.startsWith('[')) {
      try {
        items = JSON.parse(v);
      } catch {
        problems.push(`${name}: not a valid JSON array`);
        return null;
      }
      if (!Array.isArray(items) || !items.every((i) => typeof i === 'string')) {
        problems.push(`${name}: the JSON value must be an array of strings`);
        return null;
      }
    } else {
      items = v.split(',');
    }
    const out = (items as string[]).map((s) => s.trim().toLowerCase()).filter((s) => s !== '');
    for (const d of out) {
      if (!/^[a-z0-9.-]+$/.test(d) || !d.includes('.')) problems.push(`${name}: '${d}' is not a domain name`);
    }
    return out.length ? out : null;
  };

  const port = int('SERVICE_PORT', 0, 65535) ?? 8080;
  const host = str('SERVICE_HOST') ?? '127.0.0.1';
  const multiTenantMode = bool('SERVICE_MULTI_TENANT_MODE', false);
  let idpPreset: IdpPreset | null = null;
  const presetName = str('SERVICE_IDP_PRESET');
  if (presetName !== null) {
    if (isIdpPreset(presetName.toLowerCase())) idpPreset = presetName.toLowerCase() as IdpPreset;
    else problems.push(`SERVICE_IDP_PRESET: expected one of ${Object.keys(IDP_PRESETS).join(', ')}, got '${presetName}'`);
  }
  const preset: { tenantClaim?: string; tenantIdClaim?: string; adminRoleClaim?: string; tenantRoleClaim?: string } = idpPreset ? IDP_PRESETS[idpPreset] : {};
  const jwtTenantClaim = str('SERVICE_JWT_TENANT_CLAIM') ?? preset.tenantClaim ?? null;
  const jwtTenantIdClaim = str('SERVICE_JWT_TENANT_ID_CLAIM') ?? preset.tenantIdClaim ?? null;
  const jwtTenantRoleClaim = str('SERVICE_JWT_TENANT_ROLE_CLAIM') ?? preset.tenantRoleClaim ?? null;
  if (jwtTenantRoleClaim !== null && !/^[^.]+(\.[^.]+)*$/.test(jwtTenantRoleClaim)) {
    problems.push(`SERVICE_JWT_TENANT_ROLE_CLAIM: '${jwtTenantRoleClaim}' is not a claim name or dot path`);
  }
  if (jwtTenantIdClaim !== null && !/^[^.]+(\.[^.]+)*$/.test(jwtTenantIdClaim)) {
    problems.push(`SERVICE_JWT_TENANT_ID_CLAIM: '${jwtTenantIdClaim}' is not a claim name or dot path`);
  }
  const registrationRequiresApproval = bool('SERVICE_TENANT_REGISTRATION_REQUIRES_APPROVAL', false);
  const registrationAllowedDomains = list('SERVICE_TENANT_REGISTRATION_ALLOWED_DOMAINS');
  const maxTenantsPerUser = int('SERVICE_MAX_TENANTS_PER_USER', 1, 1_000_000);
  const frontendBaseUrl = url('SERVICE_FRONTEND_BASE_URL', ['http:', 'https:']);
  const publicUrl = url('SERVICE_PUBLIC_URL', ['http:', 'https:']);

  const debug = bool('SERVICE_DEBUG', false);
  let logLevel: LogLevel = debug ? 'debug' : 'info';
  const lvl = raw('SERVICE_LOG_LEVEL');
  if (lvl !== undefined) {
    const lower = lvl.toLowerCase() as LogLevel;
    if (LOG_LEVELS.includes(lower)) logLevel = lower;
    else problems.push(`SERVICE_LOG_LEVEL: expected one of ${LOG_LEVELS.join(', ')}, got '${lvl}'`);
  }

  const databaseUrl = url('SERVICE_DATABASE_URL', ['postgres:', 'postgresql:']);
  const migrationDatabaseUrl = url('SERVICE_MIGRATION_DATABASE_URL', ['postgres:', 'postgresql:']);
  if (migrationDatabaseUrl !== null && databaseUrl === null) problems.push('SERVICE_MIGRATION_DATABASE_URL: needs SERVICE_DATABASE_URL as well');
  const dataDir = path.resolve(str('SERVICE_DATA_DIR') ?? './.data');
  const redisUrl = url('SERVICE_REDIS_URL', ['redis:', 'rediss:']);

  const jwtSecret = str('SERVICE_JWT_SECRET');
  if (jwtSecret !== null && Buffer.byteLength(jwtSecret) < 32) {
    problems.push('SERVICE_JWT_SECRET: must be at least 32 bytes for HS256');
  }
  const jwksUri = url('SERVICE_JWKS_URI', ['http:', 'https:']);
  const oidcIssuer = url('SERVICE_OIDC_ISSUER', ['http:', 'https:']);
  const consoleClientId = str('SERVICE_CONSOLE_CLIENT_ID');
  if (consoleClientId !== null && !oidcIssuer) problems.push('SERVICE_CONSOLE_CLIENT_ID: needs SERVICE_OIDC_ISSUER (the provider the console signs in with)');
  const consoleScopes = (str('SERVICE_CONSOLE_SCOPES') ?? 'openid profile email').split(/[\s,]+/).filter(Boolean).join(' ');
  if (!consoleScopes.split(' ').includes('openid')) problems.push("SERVICE_CONSOLE_SCOPES: must include 'openid'");
  const consoleResource = str('SERVICE_CONSOLE_RESOURCE');
  if (consoleResource !== null && !URL.canParse(consoleResource)) problems.push(`SERVICE_CONSOLE_RESOURCE: expected an absolute URI such as https://api.example.com or urn:tenant-api, got '${consoleResource}'`);
  const consoleAudience = str('SERVICE_CONSOLE_AUDIENCE');
  for (const [name, v] of [['SERVICE_CONSOLE_RESOURCE', consoleResource], ['SERVICE_CONSOLE_AUDIENCE', consoleAudience]] as const) {
    if (v !== null && consoleClientId === null) problems.push(`${name}: needs SERVICE_CONSOLE_CLIENT_ID (it is sent only by the console's OpenID sign-in)`);
  }
  const jwtIssuer = str('SERVICE_JWT_ISSUER');
  const jwtAudience = str('SERVICE_JWT_AUDIENCE');
  const jwtCacheSize = int('SERVICE_JWT_CACHE_SIZE', 0, 1_000_000) ?? 0;
  const databasePreparedStatements = bool('SERVICE_DATABASE_PREPARED_STATEMENTS', true);
  const databaseListenUrl = url('SERVICE_DATABASE_LISTEN_URL', ['postgres:', 'postgresql:']);
  if (databaseListenUrl !== null && databaseUrl === null) problems.push('SERVICE_DATABASE_LISTEN_URL: needs SERVICE_DATABASE_URL as well');
  const decisionCacheEntries = int('SERVICE_DECISION_CACHE_ENTRIES', 0, 10_000_000) ?? 100_000;
  const databaseQueryTimeoutMs = int('SERVICE_DATABASE_QUERY_TIMEOUT_MS', 100, 600_000) ?? 5_000;

  let authProvider: AuthProvider;
  const ap = raw('SERVICE_AUTH_PROVIDER');
  if (ap !== undefined) {
    const lower = ap.toLowerCase();
    if (lower === 'local' || lower === 'jwt' || lower === 'jwks' || lower === 'oidc') authProvider = lower;
    else {
      problems.push(`SERVICE_AUTH_PROVIDER: expected local, jwt, jwks or oidc, got '${ap}'`);
      authProvider = 'local';
    }
  } else {
    authProvider = oidcIssuer ? 'oidc' : jwksUri ? 'jwks' : jwtSecret ? 'jwt' : 'local';
  }
  if (authProvider === 'jwt' && !jwtSecret && !problems.some((p) => p.startsWith('SERVICE_JWT_SECRET'))) {
    problems.push('SERVICE_JWT_SECRET: required when SERVICE_AUTH_PROVIDER is jwt');
  }
  if (authProvider === 'jwks' && !jwksUri && !problems.some((p) => p.startsWith('SERVICE_JWKS_URI'))) {
    problems.push('SERVICE_JWKS_URI: required when SERVICE_AUTH_PROVIDER is jwks');
  }
  if (authProvider === 'oidc' && !oidcIssuer && !problems.some((p) => p.startsWith('SERVICE_OIDC_ISSUER'))) {
    problems.push('SERVICE_OIDC_ISSUER: required when SERVICE_AUTH_PROVIDER is oidc');
  }

  const adminRole = str('SERVICE_ADMIN_ROLE') ?? 'admin';
  const adminRoleClaim = str('SERVICE_ADMIN_ROLE_CLAIM') ?? preset.adminRoleClaim ?? 'roles';
  if (!/^[^.]+(\.[^.]+)*$/.test(adminRoleClaim)) {
    problems.push(`SERVICE_ADMIN_ROLE_CLAIM: '${adminRoleClaim}' is not a claim name or dot path`);
  }
  const adminIssuers = adminIssuersOf(raw('SERVICE_ADMIN_ISSUER'), problems) ?? defaultAdminIssuers(authProvider, jwtIssuer, oidcIssuer);
  const defaultTenantSlug = str('SERVICE_DEFAULT_TENANT_SLUG') ?? 'default';
  if (!SLUG.test(defaultTenantSlug) || defaultTenantSlug.length > 255) {
    problems.push(`SERVICE_DEFAULT_TENANT_SLUG: must match ^[a-z0-9-]+$, got '${defaultTenantSlug}'`);
  }
  const rateLimitEnabled = bool('SERVICE_RATE_LIMIT_ENABLED', true);
  const rateLimitDecisionPerMinute = int('SERVICE_RATE_LIMIT_DECISION_PER_MINUTE', 1, 10_000_000);
  const redisKeyPrefix = env.SERVICE_REDIS_KEY_PREFIX ?? 'tenant-service:';
  const trust = parseTrustProxy(raw('SERVICE_TRUST_PROXY'));
  if ('problem' in trust) problems.push(`SERVICE_TRUST_PROXY: ${trust.problem}`);
  const trustProxy = 'value' in trust ? trust.value : false;
  const graphqlPath = str('SERVICE_GRAPHQL_PATH') ?? '/graphql';
  if (!graphqlPath.startsWith('/')) problems.push(`SERVICE_GRAPHQL_PATH: must start with '/', got '${graphqlPath}'`);
  const metricsToken = str('SERVICE_METRICS_TOKEN');
  if (metricsToken !== null && (metricsToken.length < 16 || /\s/.test(metricsToken))) {
    problems.push('SERVICE_METRICS_TOKEN: must be at least 16 characters without white space');
  }

  const eventRetentionDays = int('SERVICE_EVENT_RETENTION_DAYS', 1, 36_500) ?? 365;
  const importMaxBytes = int('SERVICE_IMPORT_MAX_BYTES', 1, Number.MAX_SAFE_INTEGER) ?? 1_073_741_824;
  const webhookAllowPrivateNetworks = bool('SERVICE_WEBHOOK_ALLOW_PRIVATE_NETWORKS', false);
  const decisionTenantToken = bool('SERVICE_DECISION_TENANT_TOKEN', false);
  // Top-level keys, case-sensitive as settings keys are; `none` copies no value at all.
  let eventSettingsKeys = ['admin_email', 'billing_plan', 'features'];
  const esk = raw('SERVICE_EVENT_SETTINGS_KEYS');
  if (esk !== undefined) {
    eventSettingsKeys = esk.toLowerCase() === 'none' ? [] : [...new Set(esk.split(',').map((k) => k.trim()).filter((k) => k !== ''))];
    for (const k of eventSettingsKeys) {
      if (k.length > 255) problems.push(`SERVICE_EVENT_SETTINGS_KEYS: a key is longer than 255 characters ('${k.slice(0, 40)}…')`);
    }
  }
  let reservedSlugs = ['admin', 'api', 'app', 'default', 'help', 'root', 'setup', 'status', 'support', 'system', 'www'];
  const rs = raw('SERVICE_RESERVED_SLUGS');
  if (rs !== undefined) {
    let items: unknown = rs.split(',');
    if (rs.startsWith('[')) {
      try {
        items = JSON.parse(rs);
      } catch {
        items = null;
      }
    }
    if (!Array.isArray(items) || !items.every((i) => typeof i === 'string')) {
      problems.push('SERVICE_RESERVED_SLUGS: expected a comma-separated list or a JSON array of slugs');
    } else {
      reservedSlugs = (items as string[]).map((i) => i.trim().toLowerCase()).filter((i) => i !== '');
      for (const r of reservedSlugs) {
        if (!SLUG.test(r) || r.length > 255) problems.push(`SERVICE_RESERVED_SLUGS: '${r}' is not a slug (^[a-z0-9-]+$)`);
      }
    }
  }
  if (!reservedSlugs.includes(defaultTenantSlug)) reservedSlugs.push(defaultTenantSlug);
  const slugRetirementDays = int('SERVICE_SLUG_RETIREMENT_DAYS', 0, 36_500) ?? 90;
  const invitationTtlHours = int('SERVICE_INVITATION_TTL_HOURS', 1, 8_760) ?? 168;
  const smtpUrl = url('SERVICE_SMTP_URL', ['smtp:', 'smtps:']);
  const mailFrom = str('SERVICE_MAIL_FROM');
  if (mailFrom !== null && !/^[^\s@<>]+@[^\s@<>]+$|^[^<>]*<[^\s@<>]+@[^\s@<>]+>$/.test(mailFrom)) {
    problems.push(`SERVICE_MAIL_FROM: expected an email address ('tenants@example.com' or 'Acme <tenants@example.com>'), got '${mailFrom}'`);
  }
  if (smtpUrl !== null && mailFrom === null) problems.push('SERVICE_MAIL_FROM: required when SERVICE_SMTP_URL is set');
  // No public-URL variable exists: the default issuer is the bind address, the same on every
  // instance started with the same configuration; production sets its public URL.
  const tenantTokenIssuer = str('SERVICE_TENANT_TOKEN_ISSUER') ?? `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  const tenantTokenAudience = str('SERVICE_TENANT_TOKEN_AUDIENCE') ?? 'tenant-service-products';
  const tenantTokenTtlSeconds = int('SERVICE_TENANT_TOKEN_TTL', 1, 3600) ?? 300;
  // The service refuses bearer tokens with its tenant tokens' issuer or audience: sharing them with the identity provider's would refuse every caller.
  if (tenantTokenIssuer === jwtIssuer || tenantTokenIssuer === oidcIssuer || tenantTokenIssuer === 'urn:tenant-service:local') {
    problems.push(`SERVICE_TENANT_TOKEN_ISSUER: '${tenantTokenIssuer}' is also the issuer of the tokens this service accepts; choose another`);
  }
  if (tenantTokenAudience === jwtAudience) {
    problems.push(`SERVICE_TENANT_TOKEN_AUDIENCE: '${tenantTokenAudience}' is also SERVICE_JWT_AUDIENCE; choose another`);
  }
  const keyEncryptionSecret = str('SERVICE_KEY_ENCRYPTION_SECRET');
  if (keyEncryptionSecret !== null && Buffer.byteLength(keyEncryptionSecret, 'utf8') < 32) {
    problems.push('SERVICE_KEY_ENCRYPTION_SECRET: must be at least 32 bytes (a random string, e.g. `openssl rand -base64 32`)');
  }

  if (problems.length) throw new ConfigError(problems);

  return Object.freeze({
    port,
    host,
    multiTenantMode,
    jwtTenantClaim,
    jwtTenantIdClaim,
    jwtTenantRoleClaim,
    idpPreset,
    registrationRequiresApproval,
    registrationAllowedDomains: registrationAllowedDomains ? Object.freeze(registrationAllowedDomains) : null,
    maxTenantsPerUser,
    frontendBaseUrl,
    publicUrl,
    logLevel,
    databaseUrl,
    migrationDatabaseUrl,
    dataDir,
    redisUrl,
    authProvider,
    jwtSecret,
    jwksUri,
    oidcIssuer,
    consoleClientId,
    consoleScopes,
    consoleResource,
    consoleAudience,
    jwtIssuer,
    jwtAudience,
    jwtCacheSize,
    databasePreparedStatements,
    databaseListenUrl,
    decisionCacheEntries,
    databaseQueryTimeoutMs,
    adminRole,
    adminRoleClaim,
    adminIssuers: Object.freeze(adminIssuers),
    defaultTenantSlug,
    rateLimitEnabled,
    rateLimitDecisionPerMinute,
    redisKeyPrefix,
    trustProxy,
    graphqlPath,
    eventRetentionDays,
    importMaxBytes,
    webhookAllowPrivateNetworks,
    decisionTenantToken,
    eventSettingsKeys: Object.freeze(eventSettingsKeys),
    reservedSlugs: Object.freeze(reservedSlugs),
    slugRetirementDays,
    invitationTtlHours,
    smtpUrl,
    mailFrom,
    metricsToken,
    tenantTokenIssuer,
    tenantTokenAudience,
    tenantTokenTtlSeconds,
    keyEncryptionSecret,
  });
}

/** Hides the password of a URL so it can be logged or put in an error message. */
export function redactUrl(value: string): string {
  try {
    const u = new URL(value);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return value.replace(/\/\/([^:/@]+):[^@]+@/, '//$1:***@');
  }
}
