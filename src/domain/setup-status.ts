/**
 * Setup status (docs/tenants.md#tenant-administration): what this deployment is running on and what
 * to change before production. Reads only: computing it never creates or changes a row.
 */
import { readTenantCounts } from '../db/queries/setup-status';
import { withService, type Database } from '../db/tenant-scope';
import { noPlatformAdminReason } from '../admin-issuers';
import type { AuthProvider, Config } from '../config';
import { holdsEncryptedSecrets } from './secrets-at-rest';

/** What the recommendations are derived from; gathered by `getSetupStatus`. */
export interface DeploymentFacts {
  multiTenantMode: boolean;
  authProvider: AuthProvider;
  /** Issuer and audience checks configured (SERVICE_JWT_ISSUER / SERVICE_JWT_AUDIENCE). */
  jwtIssuer: string | null;
  jwtAudience: string | null;
  frontendBaseUrl: string | null;
  defaultTenantSlug: string;
  dataDir: string;
  embeddedDatabase: boolean;
  /** null when rate limits are off (SERVICE_RATE_LIMIT_ENABLED=false). */
  rateLimitStore: 'memory' | 'redis' | 'degraded' | null;
  hasDefaultTenant: boolean;
  /** Another tenant (not marked default) holds the default tenant's slug. */
  defaultSlugHeldByOther?: boolean;
  /** Tenants besides the default. */
  otherTenants: number;
  pendingApproval: number;
  /** SERVICE_KEY_ENCRYPTION_SECRET is set: tenant-token private keys are encrypted at rest. */
  keyEncryptionSecretSet: boolean;
  /** The database holds secrets encrypted with SERVICE_KEY_ENCRYPTION_SECRET (so an instance without it refuses to sign). */
  encryptedSecretsHeld?: boolean;
  /** SERVICE_JWT_TENANT_ID_CLAIM: the provider's tokens carry organization ids. */
  tenantIdClaim?: string | null;
  /** Tenants besides the default that provision from claims without an identity link. */
  unlinkedProvisioning?: number;
  /** Why no token can be a platform admin (src/admin-issuers.ts); null or absent when one can. */
  noPlatformAdmin?: string | null;
  /** Memory decisions (docs/architecture.md "Decisions from memory"): on and listening, or why not. */
  decisionMemory?: 'on' | 'disabled' | 'pooler_without_listen_url' | 'listener_not_listening';
}

export interface SetupStatusResult {
  setupNeeded: boolean;
  hasDefaultTenant: boolean;
  defaultTenantId: string | null;
  defaultTenantSlug: string;
  multiTenantMode: boolean;
  authProvider: AuthProvider;
  recommendations: string[];
}

const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;

/** Concrete sentences about this deployment, most important first. Pure, for unit tests. */
export function setupRecommendations(f: DeploymentFacts): string[] {
  const out: string[] = [];
  if (f.noPlatformAdmin) out.push(f.noPlatformAdmin);
  if (!f.hasDefaultTenant && f.defaultSlugHeldByOther) {
    out.push(
      `The default tenant is missing and another tenant holds its slug '${f.defaultTenantSlug}'; it is not adopted as the default. ` +
        'Rename or delete that tenant (PUT or DELETE /api/setup/tenant/{tenant_id}), or set SERVICE_DEFAULT_TENANT_SLUG to a free slug, then restart the service.',
    );
  } else if (!f.hasDefaultTenant) {
    out.push(`The default tenant '${f.defaultTenantSlug}' is missing: restart the service, whose migrations create it.`);
  }
  if (f.authProvider === 'local') {
    out.push(
      'Tokens are signed by the built-in local key (SERVICE_AUTH_PROVIDER=local), meant for trying the service out: ' +
        'set SERVICE_OIDC_ISSUER, SERVICE_JWKS_URI or SERVICE_JWT_SECRET to use your identity provider.',
    );
  } else {
    // The oidc provider checks the discovered issuer by itself; the audience is always opt-in.
    const unchecked: Array<[string, string]> = [];
    if (!f.jwtIssuer && f.authProvider !== 'oidc') unchecked.push(['issuer', 'SERVICE_JWT_ISSUER']);
    if (!f.jwtAudience) unchecked.push(['audience', 'SERVICE_JWT_AUDIENCE']);
    if (unchecked.length) {
      out.push(
        `Tokens from the ${f.authProvider} provider are not checked for their ${unchecked.map(([what]) => what).join(' and ')}: ` +
          `set ${unchecked.map(([, name]) => name).join(' and ')} so tokens minted for other services are refused.`,
      );
    }
  }
  if (f.embeddedDatabase) {
    out.push(
      `The service runs on the embedded PostgreSQL in ${f.dataDir}: set SERVICE_DATABASE_URL to a managed PostgreSQL ` +
        'for backups, high availability and more than one instance.',
    );
  }
  if (f.rateLimitStore === null) {
    out.push('Rate limits are off (SERVICE_RATE_LIMIT_ENABLED=false): turn them on so tenant creation, deletion and registration cannot be flooded.');
  } else if (f.rateLimitStore === 'memory') {
    out.push(
      "Rate-limit counters live in this process's memory: with several instances each counts on its own, " +
        'so set SERVICE_REDIS_URL to share them.',
    );
  } else if (f.rateLimitStore === 'degraded') {
    out.push('SERVICE_REDIS_URL is set but Redis is unreachable: requests pass without rate limits until it is back; check the connection.');
  }
  if (!f.keyEncryptionSecretSet && f.encryptedSecretsHeld) {
    out.push(
      'SERVICE_KEY_ENCRYPTION_SECRET is not set on this instance, but the database holds tenant-token keys or webhook secrets encrypted with it: ' +
        'this instance refuses to sign tenant tokens, rotate keys and create webhook endpoints (it never stores a secret in plain text beside encrypted ones), ' +
        'and cannot sign the deliveries of encrypted webhooks. Set SERVICE_KEY_ENCRYPTION_SECRET to the secret the other instances use.',
    );
  } else if (!f.keyEncryptionSecretSet) {
    out.push(
      'The tenant-token signing keys are stored unencrypted in the database, so a database dump alone can sign tenant tokens: ' +
        'set SERVICE_KEY_ENCRYPTION_SECRET (a random string of at least 32 bytes, e.g. `openssl rand -base64 32`), then run `tenantctl keys rotate` to replace the unencrypted key.',
    );
  }
  if (!f.frontendBaseUrl) {
    out.push('SERVICE_FRONTEND_BASE_URL is not set, so registration results carry no dashboard_url: set it to the address of your frontend.');
  }
  if (f.multiTenantMode) {
    if (f.otherTenants === 0) {
      out.push(
        `Multi-tenant mode is on but only the default tenant '${f.defaultTenantSlug}' exists: create a tenant with ` +
          'POST /api/setup/tenant or `tenantctl tenant create`, or let users register with POST /api/tenants/register.',
      );
    }
  } else {
    out.push(
      `Single-tenant mode: every request uses the default tenant '${f.defaultTenantSlug}'. To host several organizations, ` +
        'set SERVICE_MULTI_TENANT_MODE=true; existing data stays in the default tenant.',
    );
    if (f.otherTenants > 0) {
      out.push(
        `${plural(f.otherTenants, 'tenant besides the default exists', 'tenants besides the default exist')} but cannot be reached in single-tenant mode: ` +
          'set SERVICE_MULTI_TENANT_MODE=true to serve them.',
      );
    }
  }
  if (f.multiTenantMode && f.tenantIdClaim && (f.unlinkedProvisioning ?? 0) > 0) {
    // Names collide and users of some providers mint them; ids do not (docs/identity-providers.md#organization-ids).
    out.push(
      `${plural(f.unlinkedProvisioning!, 'tenant provisions', 'tenants provision')} members from name claims without an identity link, while tokens carry organization ids ` +
        `(${f.tenantIdClaim}): link each to its organization (identity_links in PUT /api/setup/tenant/{tenant_id}) so only that organization's members join it.`,
    );
  }
  if (f.decisionMemory === 'pooler_without_listen_url') {
    out.push(
      'Decisions are answered from the database, not from memory: SERVICE_DATABASE_URL goes through a transaction pooler, which cannot carry LISTEN. ' +
        'Set SERVICE_DATABASE_LISTEN_URL to a direct (session) connection to PostgreSQL so each instance can answer decisions from memory.',
    );
  } else if (f.decisionMemory === 'listener_not_listening') {
    out.push(
      'Decisions are answered from the database for now: the change listener of this instance is not listening (it reconnects by itself). ' +
        'If this lasts, check that SERVICE_DATABASE_LISTEN_URL (or SERVICE_DATABASE_URL) reaches PostgreSQL directly.',
    );
  } else if (f.decisionMemory === 'disabled') {
    out.push('Decisions are answered from the database, not from memory (SERVICE_DECISION_CACHE_ENTRIES=0): every product request costs a database round trip.');
  }
  if (f.pendingApproval > 0) {
    out.push(
      `${plural(f.pendingApproval, 'tenant awaits', 'tenants await')} approval: list them with GET /api/setup/tenants and approve with ` +
        'PUT /api/setup/tenant/{tenant_id} {"status":"active"}.',
    );
  }
  return out;
}

/** Everything the rest of the status needs from outside the database. */
export interface SetupEnvironment {
  config: Config;
  embeddedDatabase: boolean;
  rateLimitStore: 'memory' | 'redis' | 'degraded' | null;
  decisionMemory?: DeploymentFacts['decisionMemory'];
}

/** Reads the setup status in one read-only transaction: no row is created or changed. */
export async function getSetupStatus(db: Database, env: SetupEnvironment): Promise<SetupStatusResult> {
  const { config } = env;
  const { facts, encryptedSecretsHeld } = await withService(
    db,
    async (trx) => ({ facts: await readTenantCounts(trx, config.defaultTenantSlug), encryptedSecretsHeld: config.keyEncryptionSecret === null && (await holdsEncryptedSecrets(trx)) }),
    { readOnly: true },
  );
  const hasDefaultTenant = facts.defaultTenant !== null;
  const defaultTenantSlug = facts.defaultTenant?.slug ?? config.defaultTenantSlug;
  const recommendations = setupRecommendations({
    multiTenantMode: config.multiTenantMode,
    authProvider: config.authProvider,
    jwtIssuer: config.jwtIssuer,
    jwtAudience: config.jwtAudience,
    noPlatformAdmin: noPlatformAdminReason(config),
    frontendBaseUrl: config.frontendBaseUrl,
    defaultTenantSlug,
    dataDir: config.dataDir,
    embeddedDatabase: env.embeddedDatabase,
    rateLimitStore: env.rateLimitStore,
    hasDefaultTenant,
    defaultSlugHeldByOther: facts.defaultSlugHeldByOther,
    otherTenants: facts.otherTenants,
    pendingApproval: facts.pendingApproval,
    keyEncryptionSecretSet: config.keyEncryptionSecret !== null,
    encryptedSecretsHeld,
    tenantIdClaim: config.jwtTenantIdClaim,
    unlinkedProvisioning: facts.unlinkedProvisioning,
    decisionMemory: env.decisionMemory,
  });
  return {
    setupNeeded: !hasDefaultTenant,
    hasDefaultTenant,
    defaultTenantId: facts.defaultTenant?.id ?? null,
    defaultTenantSlug,
    multiTenantMode: config.multiTenantMode,
    authProvider: config.authProvider,
    recommendations,
  };
}
