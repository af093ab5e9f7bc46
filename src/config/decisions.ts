/** The gateway decision and the tenant tokens it and GET /api/tenant/token hand out. */
import type { AuthConfig } from './identity';
import type { EnvReader } from './env-reader';
import type { ServiceConfig } from './service';

export interface DecisionsConfig {
  /** SERVICE_DECISION_CACHE_ENTRIES: decisions' facts kept in memory (docs/architecture.md "Decisions from memory"); 0: off. */
  readonly decisionCacheEntries: number;
  /** SERVICE_DECISION_TENANT_TOKEN: the gateway decision also hands the product a tenant token (X-Tenant-Token). */
  readonly decisionTenantToken: boolean;
  /** `iss` of tenant tokens (SERVICE_TENANT_TOKEN_ISSUER; default http://SERVICE_HOST:SERVICE_PORT). */
  readonly tenantTokenIssuer: string;
  /** `aud` of tenant tokens (SERVICE_TENANT_TOKEN_AUDIENCE). */
  readonly tenantTokenAudience: string;
  /** Lifetime of a tenant token in seconds (SERVICE_TENANT_TOKEN_TTL, at most 3600). */
  readonly tenantTokenTtlSeconds: number;
  /** Encrypts the tenant-token private keys at rest (SERVICE_KEY_ENCRYPTION_SECRET); null: stored plain. */
  readonly keyEncryptionSecret: string | null;
}

export function readDecisionsConfig(env: EnvReader, service: Pick<ServiceConfig, 'host' | 'port'>, auth: Pick<AuthConfig, 'jwtIssuer' | 'oidcIssuer' | 'jwtAudience'>): DecisionsConfig {
  const decisionCacheEntries = env.int('SERVICE_DECISION_CACHE_ENTRIES', 0, 10_000_000) ?? 100_000;
  const decisionTenantToken = env.bool('SERVICE_DECISION_TENANT_TOKEN', false);
  // No public-URL variable exists: the default issuer is the bind address, the same on every
  // instance started with the same configuration; production sets its public URL.
  const { host, port } = service;
  const tenantTokenIssuer = env.str('SERVICE_TENANT_TOKEN_ISSUER') ?? `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  const tenantTokenAudience = env.str('SERVICE_TENANT_TOKEN_AUDIENCE') ?? 'tenant-service-products';
  const tenantTokenTtlSeconds = env.int('SERVICE_TENANT_TOKEN_TTL', 1, 3600) ?? 300;
  // The service refuses bearer tokens with its tenant tokens' issuer or audience: sharing them with the identity provider's would refuse every caller.
  if (tenantTokenIssuer === auth.jwtIssuer || tenantTokenIssuer === auth.oidcIssuer || tenantTokenIssuer === 'urn:tenant-service:local') {
    env.problems.push(`SERVICE_TENANT_TOKEN_ISSUER: '${tenantTokenIssuer}' is also the issuer of the tokens this service accepts; choose another`);
  }
  if (tenantTokenAudience === auth.jwtAudience) {
    env.problems.push(`SERVICE_TENANT_TOKEN_AUDIENCE: '${tenantTokenAudience}' is also SERVICE_JWT_AUDIENCE; choose another`);
  }
  const keyEncryptionSecret = env.str('SERVICE_KEY_ENCRYPTION_SECRET');
  if (keyEncryptionSecret !== null && Buffer.byteLength(keyEncryptionSecret, 'utf8') < 32) {
    env.problems.push('SERVICE_KEY_ENCRYPTION_SECRET: must be at least 32 bytes (a random string, e.g. `openssl rand -base64 32`)');
  }
  return { decisionCacheEntries, decisionTenantToken, tenantTokenIssuer, tenantTokenAudience, tenantTokenTtlSeconds, keyEncryptionSecret };
}
