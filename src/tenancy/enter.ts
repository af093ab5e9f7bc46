/**
 * Entering a tenant for a request (docs/tenants.md#tenant-resolution): which tenant the request
 * names (./resolve), the facts of it in one statement (src/db/queries/enter-tenant.ts), the
 * decision (./decide), and the rows the decision asks for. Without `run` the request needs nothing
 * but the entry, and an existing member costs one statement that is its own transaction; with `run`
 * the handler's queries follow in the same transaction.
 */
import type { Logger } from 'pino';
import type { Transaction } from '../db/tenant-scope';
import type { Membership, Tenant, TenantEntryFacts } from '../context/entities';
import { MEMBER_ROLE } from '../context/roles';
import type { AuthenticatedContext, EnteredTenant, TenantContext } from '../context/request';
import {
  followTokenRole,
  insertMembership,
  readTenantFacts,
  rereadTenantFacts,
  withTenantFacts,
  type TenantFactsQuery,
} from '../db/queries/enter-tenant';
import { bindDirectoryUser, bindExistingMember, notInDirectory } from '../domain/directory-binding';
import { emailKey } from '../domain/scim/resources';
import { memberData, recordEvent } from '../domain/events';
import { ApiError } from '../errors';
import { factsKey } from './decision-memory';
import { decideEntry, refusalOf, tokenRole, type EntryDecision, type EntryRequest, type TenantAccess, type TenantFacts } from './decide';
import { readClaim, requestedTenant, type TenantSource } from './resolve';
import { emailDomains } from '../domain/domains/names';
import { defaultAdminIssuers } from '../admin-issuers';
import { oidcIssuer } from '../oidc/issuer';

/** The deployment's own provider's issuers (none when no issuer is pinned): see `EntryCaller.providerIssuers`. */
function providerIssuers(config: AuthenticatedContext['config']): readonly string[] {
  return defaultAdminIssuers(config.authProvider, config.jwtIssuer, config.oidcIssuer);
}

/** The request's tenant request and the statement that reads its facts. */
function askedTenant(ctx: AuthenticatedContext, header: string | null): { request: EntryRequest; query: TenantFactsQuery } {
  const { config, caller } = ctx;
  const roleClaim = config.jwtTenantRoleClaim;
  // The roles the token names: their permissions are read with the facts (one statement).
  const who = {
    issuer: caller.issuer,
    subject: caller.subject,
    roles: roleClaim === null ? [] : tokenRole(readClaim(caller.claims, roleClaim)),
    // Only a verified email may name a member's directory user (docs/directory-sync.md#members-who-were-there-first).
    emailKey: caller.emailVerified === true && caller.email ? emailKey(caller.email) : null,
    // The verified email's domains find the tenant's verified domain (docs/domains.md#joining-by-domain).
    emailDomains: caller.emailVerified === true && caller.email ? emailDomains(caller.email) : null,
  };
  if (!config.multiTenantMode) return { request: { kind: 'default' }, query: { slug: null, ...who } };
  const own = ownProviderTenant(ctx, header);
  if (own) return { request: own.request, query: { slug: null, tenantId: own.tenantId, ...who } };
  const request = requestedTenant({ claims: caller.claims, header, customClaim: config.jwtTenantClaim, idClaim: config.jwtTenantIdClaim });
  const refusal = refusalOf(request);
  if (refusal) throw refusal;
  if (request.kind === 'tenant' && request.source === 'email_domain') {
    // The tenant that verified the email's domain first (longest verified suffix); the slug rule
    // only when none did (docs/domains.md#resolution). The email names the tenant here as the
    // slug rule lets it (verified or not stated); what it admits is decided on `emailVerified`.
    const domains = typeof caller.claims.email === 'string' ? emailDomains(caller.claims.email) : null;
    return { request, query: { slug: request.slug, ...who, emailDomains: domains, byDomain: domains !== null } };
  }
  if (request.kind === 'tenant') return { request, query: { slug: request.slug, ...who } };
  if (request.kind !== 'linked') throw new Error(`unexpected tenant request '${request.kind}'`);
  // One id: the tenant linked to it. Several: the header chose (the decision checks its links).
  if (request.organizationIds.length === 1) return { request, query: { slug: null, link: { issuer: caller.issuer, organizationId: request.organizationIds[0]! }, ...who } };
  return { request, query: { slug: request.header, ...who } };
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * A token of the service's own OpenID provider names its tenant by id, the `tenant_id` claim
 * (docs/sign-in.md#tokens-it-issues): that tenant, looked up by id, whatever the other claims
 * say; an X-Tenant header naming another slug is refused like a claim and a header that
 * disagree. The source is not a name claim, so such a token never provisions a stranger nor
 * sets a role: the person was admitted at sign-in, and is refused once no longer a member.
 * Null for any other token.
 */
function ownProviderTenant(ctx: AuthenticatedContext, header: string | null): { request: EntryRequest; tenantId: string } | null {
  const { caller } = ctx;
  const tenantId = caller.claims.tenant_id;
  if (caller.issuer !== oidcIssuer(ctx.config) || typeof tenantId !== 'string' || !UUID.test(tenantId)) return null;
  const slug = typeof caller.claims.tenant === 'string' ? caller.claims.tenant : tenantId;
  if (header !== null && header !== slug) {
    throw new ApiError('accessDenied', `The token's 'tenant_id' claim names tenant '${slug}' but the X-Tenant header names '${header}'.`);
  }
  return { request: { kind: 'tenant', slug, source: 'tenant_id_claim', claim: 'tenant_id' }, tenantId };
}

/** The facts the decision reads (docs/tenants.md#membership). */
export function decisionFacts(ctx: { readonly caller: Pick<AuthenticatedContext['caller'], 'emailVerified'> }, f: TenantEntryFacts): TenantFacts {
  const { tenant } = f;
  return {
    slug: tenant.slug,
    status: tenant.status,
    provisionFromClaims: tenant.membershipPolicy.provisionFromClaims,
    claimsIssuer: tenant.membershipPolicy.claimsIssuer,
    links: tenant.identityLinks ?? [],
    rolesFromClaims: tenant.membershipPolicy.rolesFromClaims,
    memberRole: f.member?.role ?? null,
    rolePermissions: f.rolePermissions,
    removal: f.removal,
    directoryManaged: f.directoryManaged,
    directoryActive: f.directoryActive,
    directoryMatch: f.directoryMatch,
    // Only a verified email is at a verified domain (the facts may carry an unverified one's for resolution).
    verifiedDomain: ctx.caller.emailVerified === true ? f.domainAtEmail : null,
  };
}

/** The caller's membership the facts name (null when not a member), with the permissions the decision settled. */
function membershipOf(ctx: AuthenticatedContext, f: TenantEntryFacts, permissions: readonly string[]): Membership | null {
  return f.member && { ...f.member, issuer: ctx.caller.issuer, subject: ctx.caller.subject, permissions };
}

function decide(ctx: AuthenticatedContext, request: EntryRequest, row: TenantEntryFacts | null, access: TenantAccess): Extract<EntryDecision, { kind: 'enter' }> {
  const facts = row && decisionFacts(ctx, row);
  const roleClaim = ctx.config.jwtTenantRoleClaim;
  const caller = {
    issuer: ctx.caller.issuer,
    isPlatformAdmin: ctx.caller.isPlatformAdmin,
    providerIssuers: providerIssuers(ctx.config),
    tokenRole: roleClaim === null ? null : tokenRole(readClaim(ctx.caller.claims, roleClaim)),
    canBindDirectoryUser: row !== null && row.directoryManaged && directoryKeys(ctx, row).usable,
  };
  const d = decideEntry(request, facts, caller, access);
  if (d.kind === 'refuse') throw d.error;
  return d;
}

/**
 * What may bind the caller to a directory user (docs/directory-sync.md#directory-users-are-members):
 * the token's email when verified (an unverified email never binds), and the value of the
 * tenant's external id claim.
 */
function directoryKeys(ctx: AuthenticatedContext, row: TenantEntryFacts): { email: string | null; externalId: string | null; usable: boolean } {
  const { caller } = ctx;
  const email = caller.emailVerified === true && caller.email ? caller.email : null;
  const claim = row.externalIdClaim === null ? undefined : readClaim(caller.claims, row.externalIdClaim);
  const externalId = typeof claim === 'string' && claim.length > 0 && claim.length <= 300 ? claim : null;
  return { email, externalId, usable: email !== null || externalId !== null };
}

/** An EnteredTenant whose logger (request and tenant fields) is made only if a handler logs. */
class Entered implements EnteredTenant {
  private child: Logger | null = null;
  readonly requestId: string;
  readonly ip: string | null;
  readonly caller: EnteredTenant['caller'];
  readonly config: EnteredTenant['config'];
  readonly services: EnteredTenant['services'];

  constructor(
    ctx: AuthenticatedContext,
    readonly tenant: Tenant,
    readonly membership: Membership | null,
    readonly source: TenantSource,
  ) {
    this.requestId = ctx.requestId;
    this.ip = ctx.ip;
    this.caller = ctx.caller;
    this.config = ctx.config;
    this.services = ctx.services;
    this.from = ctx;
  }

  private readonly from: AuthenticatedContext;

  /** The request's event origin, built only if a handler records an event. */
  get origin(): EnteredTenant['origin'] {
    return this.from.origin;
  }

  get log(): Logger {
    this.child ??= this.services.logger.child({ request_id: this.requestId, tenant_id: this.tenant.id, tenant_slug: this.tenant.slug });
    return this.child;
  }
}

class InTransaction extends Entered implements TenantContext {
  constructor(
    entry: Entered,
    readonly trx: Transaction,
  ) {
    super(entry, entry.tenant, entry.membership, entry.source);
  }
}

function entered(ctx: AuthenticatedContext, tenant: Tenant, membership: Membership | null, source: TenantSource, provisioned: boolean): Entered {
  const { caller } = ctx;
  // Fields on the root logger's line, not a child logger: each field appears once.
  ctx.services.logger.info(
    { request_id: ctx.requestId, tenant_slug: tenant.slug, tenant_id: tenant.id, subject: caller.subject, issuer: caller.issuer, source, provisioned },
    'Tenant resolved for authenticated request',
  );
  return new Entered(ctx, tenant, membership, source);
}

/** The transaction path: facts, decision, the membership a first use needs, then `run`. */
async function inTransaction<T>(ctx: AuthenticatedContext, request: EntryRequest, query: TenantFactsQuery, access: TenantAccess, run: (tctx: TenantContext) => Promise<T>): Promise<T> {
  // A member bound to a directory user that the directory deactivated: the binding commits, the
  // request is refused after it.
  let refusedAfterBinding: ApiError | null = null;
  let boundIn: string | null = null;
  const out = await withTenantFacts(ctx.services.db, query, async (first, trx) => {
    let row = first;
    let d = decide(ctx, request, row, access);
    if (d.bindMember) {
      // A member from before the directory was connected, whom a directory user names: the
      // directory's from now on (docs/directory-sync.md#members-who-were-there-first).
      await bindExistingMember(trx, ctx.origin, { tenantId: row!.tenant.id, userId: row!.member!.userId, directoryUserId: d.bindMember });
      boundIn = row!.tenant.id;
      row = await rereadTenantFacts(trx, query);
      try {
        d = decide(ctx, request, row, access);
      } catch (err) {
        if (!(err instanceof ApiError)) throw err;
        refusedAfterBinding = err;
        return null;
      }
    }
    if (d.bind) {
      // A stranger to a directory-managed tenant: bound to the directory user their token names
      // (refused when none), then decided again as the member they now are.
      const keys = directoryKeys(ctx, row!);
      // Trusted by the email's verified domain only: the external id claim says nothing then.
      const externalId = d.bindByEmailOnly ? null : keys.externalId;
      await bindDirectoryUser(trx, ctx.origin, { tenantId: row!.tenant.id, tenantSlug: row!.tenant.slug, caller: ctx.caller, email: keys.email, externalId });
      row = await rereadTenantFacts(trx, query);
      d = decide(ctx, request, row, access);
      // No directory user names the caller (a concurrent request may have bound it: then a member now).
      if (d.bind) throw notInDirectory(row!.tenant.slug);
    }
    const tenant = row!.tenant;
    let membership = d.withoutMembership ? null : membershipOf(ctx, row!, d.permissions);
    let made = false;
    if (d.provision) {
      const { caller } = ctx;
      const inserted = await insertMembership(trx, { tenantId: tenant.id, issuer: caller.issuer, subject: caller.subject, email: caller.email, displayName: caller.name, role: d.role ?? MEMBER_ROLE });
      // Removed between the INSERT's conflict and the read (a concurrent removal): not a member.
      if (!inserted) throw new ApiError('accessDenied', `The user does not belong to tenant '${tenant.slug}'.`);
      const m = inserted.member;
      membership = { ...m, permissions: d.permissions };
      made = inserted.made;
      if (made) {
        // The caller became a member by this request: the event commits with the membership.
        await recordEvent(trx, ctx.origin, {
          action: d.joinedByDomain ? 'member.joined_by_domain' : 'member.provisioned',
          tenantId: tenant.id,
          target: { type: 'member', id: m.userId },
          data: {
            member: memberData(m),
            source: d.source,
            ...(d.joinedByDomain ? { domain: d.joinedByDomain, join: 'automatic' } : {}),
          },
        });
      }
    } else if (d.role !== null && membership) {
      const changed = await followTokenRole(trx, tenant.id, membership.userId, membership.role, d.role);
      if (changed) {
        const before = membership.role;
        membership = { ...membership, role: changed };
        // The identity provider made the change: its issuer is the actor, no subject of ours.
        await recordEvent(
          trx,
          { actor: { issuer: ctx.caller.issuer, subject: null, email: null, platformAdmin: false }, requestId: ctx.requestId, ip: ctx.ip },
          {
            action: 'member.role_changed',
            tenantId: tenant.id,
            target: { type: 'member', id: membership.userId },
            data: {
              member: memberData(membership),
              before: { role: before },
              after: { role: changed },
              source: 'roles_from_claims',
            },
          },
        );
      } else {
        // A concurrent request of this member changed it first and recorded the event.
        membership = { ...membership, role: d.role };
      }
    }
    return { value: await run(new InTransaction(entered(ctx, tenant, membership, d.source, made), trx)) };
  });
  if (refusedAfterBinding !== null || out === null) {
    // The binding committed: this instance forgets the tenant's facts at once (the others when its notification arrives).
    if (boundIn !== null) ctx.services.decisionMemory?.facts?.forget(boundIn);
    throw refusedAfterBinding ?? new Error('refused without a refusal');
  }
  return out.value;
}

/**
 * The facts of a request that needs no transaction: from memory when held and the change
 * listener is listening, else read (one statement) and kept unless a change of the tenant
 * arrived meanwhile (docs/architecture.md "Decisions from memory"). The decision still runs on
 * them every time.
 */
async function factsOf(ctx: AuthenticatedContext, query: TenantFactsQuery): Promise<TenantEntryFacts | null> {
  const { db, decisionMemory, metrics } = ctx.services;
  const memory = decisionMemory?.facts;
  if (!memory) return readTenantFacts(db, query);
  const key = factsKey(query);
  const held = memory.get(key);
  if (held) {
    metrics?.factsMemoryObserver?.lookup?.('memory');
    return held;
  }
  const ticket = memory.begin();
  const row = await readTenantFacts(db, query);
  metrics?.factsMemoryObserver?.lookup?.('database');
  // No tenant: not kept (a tenant created later would find nothing to drop).
  if (row) memory.keep(key, row, ticket);
  return row;
}

/**
 * Enters the request's tenant: resolves it, reads its facts and decides
 * (docs/tenants.md#tenant-resolution), throwing the documented ApiError of a refusal. With `run`,
 * runs it inside the tenant's transaction; without, returns the entry (one statement for an
 * existing member).
 */
export function enterTenant(ctx: AuthenticatedContext, header: string | null, access: TenantAccess): Promise<EnteredTenant>;
export function enterTenant<T>(ctx: AuthenticatedContext, header: string | null, access: TenantAccess, run: (tctx: TenantContext) => Promise<T>): Promise<T>;
export async function enterTenant<T>(
  ctx: AuthenticatedContext,
  header: string | null,
  access: TenantAccess,
  run?: (tctx: TenantContext) => Promise<T>,
): Promise<T | EnteredTenant> {
  const { request, query } = askedTenant(ctx, header);
  if (run) return inTransaction(ctx, request, query, access, run);
  const row = await factsOf(ctx, query);
  const d = decide(ctx, request, row, access);
  if (!d.provision && !d.bind && !d.bindMember && d.role === null) return entered(ctx, row!.tenant, d.withoutMembership ? null : membershipOf(ctx, row!, d.permissions), d.source, false);
  // A first use, or a role the token changed: the row and its event commit together, decided
  // again on the facts read inside that transaction. This instance forgets the tenant's facts
  // at once; the others when the change's notification arrives.
  try {
    return await inTransaction(ctx, request, query, access, async (tctx) => tctx);
  } finally {
    ctx.services.decisionMemory?.facts?.forget(row!.tenant.id);
  }
}
