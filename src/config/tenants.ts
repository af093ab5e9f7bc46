/** Tenants: single or multi-tenant mode, self-service registration, the default tenant and slugs, invitations, imports. */
import { SLUG, type EnvReader } from './env-reader';

export interface TenantsConfig {
  readonly multiTenantMode: boolean;
  readonly registrationRequiresApproval: boolean;
  readonly registrationAllowedDomains: readonly string[] | null;
  readonly maxTenantsPerUser: number | null;
  readonly frontendBaseUrl: string | null;
  readonly defaultTenantSlug: string;
  /** Slugs self-service registration may never take (the default tenant's slug is added). */
  readonly reservedSlugs: readonly string[];
  /** Days a deleted tenant's slug stays unavailable to self-service registration. */
  readonly slugRetirementDays: number;
  /** Lifetime of an invitation, in hours. */
  readonly invitationTtlHours: number;
  /** SERVICE_IMPORT_MAX_BYTES: the largest tenant import body accepted (413 beyond). */
  readonly importMaxBytes: number;
}

const DEFAULT_RESERVED_SLUGS = ['admin', 'api', 'app', 'default', 'help', 'root', 'setup', 'status', 'support', 'system', 'www'];

export function readTenantsConfig(env: EnvReader): TenantsConfig {
  const multiTenantMode = env.bool('SERVICE_MULTI_TENANT_MODE', false);
  const registrationRequiresApproval = env.bool('SERVICE_TENANT_REGISTRATION_REQUIRES_APPROVAL', false);
  const registrationAllowedDomains = env.domains('SERVICE_TENANT_REGISTRATION_ALLOWED_DOMAINS');
  const maxTenantsPerUser = env.int('SERVICE_MAX_TENANTS_PER_USER', 1, 1_000_000);
  const frontendBaseUrl = env.url('SERVICE_FRONTEND_BASE_URL', ['http:', 'https:']);
  const defaultTenantSlug = env.str('SERVICE_DEFAULT_TENANT_SLUG') ?? 'default';
  if (!SLUG.test(defaultTenantSlug) || defaultTenantSlug.length > 255) {
    env.problems.push(`SERVICE_DEFAULT_TENANT_SLUG: must match ^[a-z0-9-]+$, got '${defaultTenantSlug}'`);
  }
  const reservedSlugs = readReservedSlugs(env) ?? [...DEFAULT_RESERVED_SLUGS];
  if (!reservedSlugs.includes(defaultTenantSlug)) reservedSlugs.push(defaultTenantSlug);
  return {
    multiTenantMode,
    registrationRequiresApproval,
    registrationAllowedDomains: registrationAllowedDomains ? Object.freeze(registrationAllowedDomains) : null,
    maxTenantsPerUser,
    frontendBaseUrl,
    defaultTenantSlug,
    reservedSlugs: Object.freeze(reservedSlugs),
    slugRetirementDays: env.int('SERVICE_SLUG_RETIREMENT_DAYS', 0, 36_500) ?? 90,
    invitationTtlHours: env.int('SERVICE_INVITATION_TTL_HOURS', 1, 8_760) ?? 168,
    importMaxBytes: env.int('SERVICE_IMPORT_MAX_BYTES', 1, Number.MAX_SAFE_INTEGER) ?? 1_073_741_824,
  };
}

/** SERVICE_RESERVED_SLUGS: a comma list or a JSON array of slugs; null when unset or unusable. */
function readReservedSlugs(env: EnvReader): string[] | null {
  const rs = env.text('SERVICE_RESERVED_SLUGS');
  if (rs === undefined) return null;
  let items: unknown = rs.split(',');
  if (rs.startsWith('[')) {
    try {
      items = JSON.parse(rs);
    } catch {
      items = null;
    }
  }
  if (!Array.isArray(items) || !items.every((i) => typeof i === 'string')) {
    env.problems.push('SERVICE_RESERVED_SLUGS: expected a comma-separated list or a JSON array of slugs');
    return null;
  }
  const slugs = (items as string[]).map((i) => i.trim().toLowerCase()).filter((i) => i !== '');
  for (const r of slugs) {
    if (!SLUG.test(r) || r.length > 255) env.problems.push(`SERVICE_RESERVED_SLUGS: '${r}' is not a slug (^[a-z0-9-]+$)`);
  }
  return slugs;
}
