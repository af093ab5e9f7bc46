/**
 * Self-service tenant registration (docs/tenants.md#self-service-registration): who may register,
 * the per-user tenant limit, slug choice, and the caller's memberships across tenants. Never sees
 * req/res.
 */
import crypto from 'node:crypto';
import { domainToASCII } from 'node:url';
import type { Config } from '../config';
import type { TenantStatus } from '../context/tenant-status';
import { isUniqueViolation } from '../db/constraint-errors';
import { lockRegistrant, membershipsOf, type CallerMembership } from '../db/queries/registration';
import { lockSlug, retiredAmong, takenAmong } from '../db/queries/slugs';
import { countTenantsCreatedBy } from '../db/queries/tenants';
import { withPlatformRead, withSavepoint, withService, type Database, type Transaction } from '../db/tenant-scope';
import { ApiError } from '../errors';
import { freeForm, recordEvent, type EventOrigin } from './events';
import { baseSlugFromName, MAX_GENERATED_SLUG_LENGTH, slugCandidates } from './slug';
import { createTenantWithSampleData, type CreatedTenant, type NewTenant } from './tenant-admin/create-tenant';

/** The settings registration obeys. */
export type RegistrationPolicy = Pick<
  Config,
  'multiTenantMode' | 'registrationRequiresApproval' | 'registrationAllowedDomains' | 'maxTenantsPerUser'
> &
  Partial<Pick<Config, 'reservedSlugs' | 'slugRetirementDays'>>;

/** Who registers: the verified caller. */
export interface Registrant {
  readonly issuer: string;
  readonly subject: string;
  /** The token's `email` claim, when it has one. */
  readonly email: string | null;
  /** The token's `email_verified`: true only for true or "true"; null when absent. */
  readonly emailVerified?: boolean | null;
  /** The token's `name` claim, used when the request has no `admin_name`. */
  readonly name: string | null;
}

/** A validated registration request (the register body, camel-cased). */
export interface RegistrationRequest {
  readonly organizationName: string;
  readonly organizationSlug?: string;
  readonly adminEmail: string;
  readonly adminName?: string;
  readonly useCase?: string;
  readonly organizationSize?: 'small' | 'medium' | 'large' | 'enterprise';
  readonly metadata?: Record<string, unknown>;
  /** Default true here (unlike the admin create endpoint). */
  readonly includeSampleData?: boolean;
}

export interface Registration {
  readonly tenantId: string;
  readonly organizationName: string;
  readonly slug: string;
  readonly status: TenantStatus;
  readonly adminUserId: string;
  /** True when the slug was generated from the name rather than given. */
  readonly slugGenerated: boolean;
}


/** Candidates checked per query while looking for a free generated slug. */
const CANDIDATE_BATCH = 50;
/** `acme`, `acme-2` … `acme-10000`; past that a random suffix (see `pickFreeSlug`). */
const MAX_CANDIDATE = 10_000;
/** Times a generated slug may be taken by a concurrent registration before giving up. */
const MAX_SLUG_RACES = 10;

/**
 * The ASCII (punycode) domain of an email address, lowercased, without a trailing dot; null
 * when the address has no usable domain.
 */
export function emailDomain(email: string): string | null {
  const at = email.lastIndexOf('@');
  if (at <= 0 || at === email.length - 1) return null;
  const host = email.slice(at + 1).trim().toLowerCase().replace(/\.$/, '');
  if (host === '') return null;
  const ascii = domainToASCII(host);
  return ascii === '' ? null : ascii;
}

/**
 * Exact, case-insensitive match against the allowed list. Subdomains do not count: listing
 * `acme.com` does not admit `eu.acme.com` (list it too), because a subdomain can be run by
 * someone else than the parent domain's owner. A null list admits every domain.
 */
export function isDomainAllowed(domain: string, allowed: readonly string[] | null): boolean {
  if (allowed === null) return true;
  const d = domain.toLowerCase();
  return allowed.some((a) => a.toLowerCase() === d);
}

/**
 * The checks that need no database: multi-tenant mode, then the allowed domains of
 * `admin_email` and of the caller's `email` claim. Throws the matching 403 ApiError.
 */
export function assertMayRegister(policy: RegistrationPolicy, registrant: Registrant, adminEmail: string): void {
  if (!policy.multiTenantMode) {
    throw new ApiError('registrationDisabled', 'Tenant registration is only available in multi-tenant mode.');
  }
  const allowed = policy.registrationAllowedDomains;
  if (allowed === null) return;
  // admin_email first: when its domain is not listed, the detail names that
  // domain, whatever the token carries (docs/tenants.md#errors).
  assertDomainListed(allowed, 'admin_email', adminEmail);
  // admin_email is whatever the caller typed; only the token's own verified email proves who
  // they are. Absent email_verified counts as unverified here.
  if (registrant.email === null || registrant.emailVerified !== true) {
    throw new ApiError(
      'domainNotAllowed',
      registrant.email === null
        ? 'Registration is limited to allowed email domains, and the token carries no email claim.'
        : 'Registration is limited to allowed email domains, and the token carries no verified email (email_verified must be true).',
    );
  }
  assertDomainListed(allowed, "the token's email claim", registrant.email);
}

function assertDomainListed(allowed: readonly string[], what: string, email: string): void {
  const domain = emailDomain(email);
  if (domain === null || !isDomainAllowed(domain, allowed)) {
    const shown = domain ?? (email.includes('@') ? email.slice(email.lastIndexOf('@') + 1) : email);
    throw new ApiError('domainNotAllowed', `Registration is not allowed for the email domain '${shown}' (${what}).`);
  }
}

/**
 * Registers a tenant for the caller, who becomes its `admin` member, in one transaction:
 * per-caller advisory lock → tenant limit → slug → tenant, admin and sample data.
 * Throws ApiError 403 (disabled, domain, limit) or 409 (a given slug is taken).
 */
export async function registerTenantForCaller(
  db: Database,
  origin: EventOrigin,
  policy: RegistrationPolicy,
  registrant: Registrant,
  request: RegistrationRequest,
): Promise<Registration> {
  assertMayRegister(policy, registrant, request.adminEmail);

  const organizationName = request.organizationName.trim();
  // The contract's pattern already refuses blank names; this guards callers that skip it.
  if (organizationName === '') throw new ApiError('validation', 'body.organization_name must contain a character that is not white space.');
  const status = policy.registrationRequiresApproval ? 'pending_approval' : 'active';
  const tenantFor = (slug: string): NewTenant => ({
    name: organizationName,
    slug,
    settings: { admin_email: request.adminEmail },
    status,
    createdBy: { issuer: registrant.issuer, subject: registrant.subject },
    registration: registrationRecord(request),
    // Members of a self-registered tenant join by invitation, never by naming it in a claim.
    membershipPolicy: { provisionFromClaims: false, claimsIssuer: null },
    admin: {
      issuer: registrant.issuer,
      subject: registrant.subject,
      email: request.adminEmail,
      displayName: request.adminName ?? registrant.name,
    },
    includeSampleData: request.includeSampleData ?? true,
  });

  return withService(db, async (trx) => {
    if (policy.maxTenantsPerUser !== null) {
      // Serialises one caller's registrations (and only theirs) until commit, so concurrent
      // requests cannot all pass the count below before any of them has inserted.
      await lockRegistrant(trx, registrant.issuer, registrant.subject);
      const registered = await countRegisteredTenants(trx, registrant);
      if (registered >= policy.maxTenantsPerUser) {
        throw new ApiError(
          'tenantLimitReached',
          `You have already registered ${registered} tenant${registered === 1 ? '' : 's'}; the limit is ${policy.maxTenantsPerUser} per user.`,
        );
      }
    }

    let created: CreatedTenant;
    let slugGenerated = false;
    const unavailable = unavailableSlugs(policy);
    if (request.organizationSlug !== undefined) {
      await assertSlugRegistrable(trx, request.organizationSlug, unavailable);
      // A taken slug is the unique violation on tenants_slug_unique → 409 Conflict naming it.
      created = await createTenantWithSampleData(trx, tenantFor(request.organizationSlug));
    } else {
      slugGenerated = true;
      created = await insertWithGeneratedSlug(trx, baseSlugFromName(organizationName), tenantFor, unavailable);
    }
    const t = created.tenant;
    await recordEvent(trx, origin, {
      action: 'tenant.registered',
      tenantId: t.id,
      target: { type: 'tenant', id: t.id },
      data: {
        tenant: { tenant_id: t.id, name: t.name, slug: t.slug, settings: freeForm(t.settings), status: t.status },
        admin: { user_id: created.adminUserId, issuer: registrant.issuer, subject: registrant.subject, email: request.adminEmail },
        // `metadata` is the caller's free-form object (up to the 1 MiB body): allow-listed keys only.
        registration: { ...created.registration, metadata: freeForm(created.registration?.metadata ?? {}) },
        slug_generated: slugGenerated,
      },
    });
    return {
      tenantId: created.tenant.id,
      organizationName: created.tenant.name,
      slug: created.tenant.slug,
      status: created.tenant.status,
      adminUserId: created.adminUserId!,
      slugGenerated,
    };
  });
}

/** Tenants the caller registered (deleted ones no longer count). */
export async function countRegisteredTenants(trx: Transaction, registrant: Pick<Registrant, 'issuer' | 'subject'>): Promise<number> {
  return countTenantsCreatedBy(trx, registrant);
}

/**
 * The caller's memberships in every tenant, oldest first. Users rows are under row-level
 * security, so this is one of the few reads through the BYPASSRLS read-only role, filtered to
 * the caller's own (issuer, subject).
 */
export async function listCallerMemberships(db: Database, registrant: Pick<Registrant, 'issuer' | 'subject'>): Promise<CallerMembership[]> {
  return withPlatformRead(db, (trx) => membershipsOf(trx, registrant.issuer, registrant.subject));
}

/**
 * The dashboard link: SERVICE_FRONTEND_BASE_URL with `tenant=<slug>` set in its query, keeping
 * its path and other parameters; null when no frontend is configured.
 */
export function dashboardUrl(frontendBaseUrl: string | null, slug: string): string | null {
  if (frontendBaseUrl === null) return null;
  const url = new URL(frontendBaseUrl);
  url.searchParams.set('tenant', slug);
  return url.toString();
}

/** What the new admin is told to do next. */
export function adminInstructions(slug: string, status: Registration['status']): string {
  const use = `Send the header 'X-Tenant: ${slug}' with your bearer token on every API request for this tenant; you are its admin.`;
  return status === 'pending_approval'
    ? `Tenant '${slug}' is awaiting approval by a platform admin and cannot be used until it is approved. Once approved: ${use}`
    : use;
}

/**
 * The registration details kept with the tenant. `metadata` is copied through JSON, so keys such
 * as `__proto__` or `constructor` stay plain data and nothing can reach an object prototype.
 */
function registrationRecord(request: RegistrationRequest): Record<string, unknown> {
  const record: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
  record.admin_email = request.adminEmail;
  record.admin_name = request.adminName ?? null;
  record.use_case = request.useCase ?? null;
  record.organization_size = request.organizationSize ?? null;
  record.metadata = request.metadata === undefined ? {} : (JSON.parse(JSON.stringify(request.metadata)) as unknown);
  record.registered_at = new Date().toISOString();
  return record;
}

/**
 * Inserts the tenant under the first free candidate of `base` (`acme`, `acme-2`, …). Each try
 * runs in a savepoint: when a concurrent registration takes the slug between the lookup and
 * the insert, the unique violation rolls back only that try and the lookup runs again.
 */
async function insertWithGeneratedSlug(
  trx: Transaction,
  base: string,
  tenantFor: (slug: string) => NewTenant,
  unavailable: UnavailableSlugs,
): Promise<CreatedTenant> {
  let races = 0;
  for (;;) {
    const slug = await pickFreeSlug(trx, base, unavailable);
    await lockSlug(trx, slug);
    if (await isRetired(trx, slug, unavailable.retirementDays)) {
      // Retired between the lookup and the lock: look again.
      races += 1;
      if (races >= MAX_SLUG_RACES) {
        throw new ApiError('unavailable', 'Could not find a free tenant slug under concurrent registrations; retry.', {}, { 'Retry-After': '1' });
      }
      continue;
    }
    try {
      return await withSavepoint(trx, (sp) => createTenantWithSampleData(sp, tenantFor(slug)));
    } catch (err) {
      if (!isUniqueViolation(err, 'tenants_slug_unique')) throw err;
      races += 1;
      if (races >= MAX_SLUG_RACES) {
        throw new ApiError('unavailable', 'Could not find a free tenant slug under concurrent registrations; retry.', {}, { 'Retry-After': '1' });
      }
    }
  }
}

/** The slugs self-service registration may not take (docs/tenants.md#self-service-registration). */
export interface UnavailableSlugs {
  readonly reserved: ReadonlySet<string>;
  readonly retirementDays: number;
}

function unavailableSlugs(policy: RegistrationPolicy): UnavailableSlugs {
  return { reserved: new Set(policy.reservedSlugs ?? ['default']), retirementDays: policy.slugRetirementDays ?? 90 };
}

/** True when a tenant with `slug` was deleted (or renamed away) within the retirement period. */
async function isRetired(trx: Transaction, slug: string, days: number): Promise<boolean> {
  return (await retiredAmong(trx, [slug], days)).has(slug);
}

/** Reserved → 409 naming the list; retired → 409 naming the retirement. */
async function assertSlugRegistrable(trx: Transaction, slug: string, unavailable: UnavailableSlugs): Promise<void> {
  if (unavailable.reserved.has(slug)) {
    throw new ApiError('conflict', `The slug '${slug}' is reserved and cannot be registered; choose another organization_slug.`);
  }
  await lockSlug(trx, slug);
  if (await isRetired(trx, slug, unavailable.retirementDays)) {
    throw new ApiError(
      'conflict',
      `The slug '${slug}' is reserved: it belonged to a tenant deleted or renamed within the last ${unavailable.retirementDays} days; choose another organization_slug.`,
    );
  }
}

/** The first candidate of `base` no tenant uses and that is neither reserved nor retired. */
async function pickFreeSlug(trx: Transaction, base: string, unavailable: UnavailableSlugs): Promise<string> {
  for (let from = 1; from <= MAX_CANDIDATE; from += CANDIDATE_BATCH) {
    const candidates = slugCandidates(base, from, CANDIDATE_BATCH);
    const taken = new Set([
      ...(await takenAmong(trx, candidates)),
      ...(await retiredAmong(trx, candidates, unavailable.retirementDays)),
      ...unavailable.reserved,
    ]);
    const free = candidates.find((c) => !taken.has(c));
    if (free !== undefined) return free;
  }
  // Ten thousand tenants of the same name: stop counting and make the slug unique at random.
  const head = base.slice(0, MAX_GENERATED_SLUG_LENGTH - 9).replace(/-+$/, '');
  return `${head}-${crypto.randomBytes(4).toString('hex')}`;
}
