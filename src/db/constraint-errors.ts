/**
 * What each named constraint of the schema means to a client when a statement violates it,
 * kept beside the models (./models.ts) whose tables own the constraints. The error catalog
 * (`mapDatabaseError` in ./database-errors.ts) looks a violation up here by constraint name and falls back
 * to its SQLSTATE class. Pure data: no database, no objection, so unit tests load it as is.
 *
 * Add an entry when a migration adds a constraint a client can reach with valid-looking input.
 */
import type { ErrorKind } from '../errors';
import { TENANT_STATUSES } from '../context/tenant-status';

/** The PostgreSQL error fields a mapping may quote (never the statement or the row). */
export interface ConstraintViolation {
  readonly code: string;
  readonly constraint: string;
  readonly detail?: string;
}

export interface ConstraintError {
  readonly kind: ErrorKind;
  readonly detail: (e: ConstraintViolation) => string;
}

const fixed =
  (kind: ErrorKind, text: string): ConstraintError => ({ kind, detail: () => text });

/** A parent tenant row gone mid-request (deleted while the request ran). */
const tenantGone = fixed('tenantNotFound', 'The tenant was deleted while the request ran.');
/** A member (users row) referenced by the request was removed while it ran. */
const memberGone = fixed('accessDenied', 'The member this request acts for was removed from the tenant while it ran.');
/** A board referenced by the request was deleted while it ran. */
const boardGone = fixed('notFound', 'The board was deleted while the request ran.');

/** `'a', 'b' or 'c'`. */
const oneOf = (values: readonly string[]): string => {
  const quoted = values.map((v) => `'${v}'`);
  return quoted.length > 1 ? `${quoted.slice(0, -1).join(', ')} or ${quoted[quoted.length - 1]}` : quoted.join('');
};

export const CONSTRAINT_ERRORS: Readonly<Record<string, ConstraintError>> = {
  // tenants (TenantRow)
  tenants_slug_unique: {
    kind: 'conflict',
    detail: (e) => {
      const slug = /\(slug\)=\((.*)\)/.exec(e.detail ?? '')?.[1];
      return slug ? `A tenant with slug '${slug}' already exists.` : 'A tenant with this slug already exists.';
    },
  },
  tenants_one_default: fixed('conflict', 'Only one tenant can be the default tenant.'),
  tenants_name_check: fixed('validation', 'The tenant name must not be empty.'),
  tenants_slug_check: fixed('validation', 'The tenant slug may contain only lowercase letters, digits and hyphens.'),
  tenants_settings_check: fixed('validation', 'The tenant settings must be a JSON object.'),
  tenants_status_known: fixed('validation', `The tenant status must be ${oneOf(TENANT_STATUSES)}.`),
  tenants_suspension_reason_check: fixed('validation', 'The suspension reason must be 1 to 500 characters.'),
  tenants_status_before_deletion_known: fixed('validation', 'The status before a scheduled deletion is not one of the allowed values.'),
  tenants_status_before_deletion_check: fixed('validation', 'The status before a scheduled deletion cannot be pending_deletion.'),
  tenants_deletion_scheduled: fixed('validation', 'A tenant pending deletion needs its deletion time and the status to restore, and no other tenant has them.'),
  tenants_claims_issuer_check: fixed('validation', 'membership_policy.claims_issuer must be 1 to 2048 characters.'),

  // tenant_domains (migration 024)
  tenant_domains_verified_unique: fixed('domainTaken', 'The domain was verified by another tenant while the request ran; it must remove it first.'),
  tenant_domains_tenant_id_fkey: tenantGone,

  // sso_connections, sso_settings (migration 028)
  sso_connections_tenant_id_fkey: tenantGone,
  sso_settings_tenant_id_fkey: tenantGone,

  // users (UserRow)
  users_tenant_identity_unique: fixed('conflict', 'This user is already a member of the tenant.'),
  users_tenant_id_fkey: tenantGone,
  users_role_check: fixed('validation', 'A role key may contain only lowercase letters, digits and hyphens (at most 64).'),

  // boards (BoardRow)
  boards_tenant_id_fkey: tenantGone,
  boards_tenant_id_created_by_fkey: memberGone,

  // board_members (BoardMemberRow)
  board_members_tenant_id_fkey: tenantGone,
  board_members_tenant_id_board_id_fkey: boardGone,
  board_members_tenant_id_user_id_fkey: memberGone,
  board_members_role_check: fixed('validation', "The board role must be 'owner', 'editor' or 'viewer'."),

  // generations (GenerationRow)
  generations_tenant_id_fkey: tenantGone,
  generations_tenant_id_board_id_fkey: boardGone,
  generations_status_check: fixed('validation', 'The generation status is not one of the allowed values.'),

  // provider_configs (ProviderConfigRow)
  provider_configs_tenant_id_fkey: tenantGone,

  // credit_transactions (CreditTransactionRow)
  credit_transactions_tenant_id_fkey: tenantGone,
  credit_transactions_tenant_id_user_id_fkey: memberGone,
  credit_transactions_kind_check: fixed('validation', 'The credit transaction kind is not one of the allowed values.'),

  // invitations (InvitationRow, migration 004)
  invitations_one_pending_per_email: fixed('conflict', 'A pending invitation for this email already exists; resend or revoke it.'),
  invitations_token_hash_unique: fixed('conflict', 'The invitation token collided with another one; retry.'),
  invitations_tenant_id_fkey: tenantGone,
  invitations_tenant_id_invited_by_fkey: memberGone,
  invitations_tenant_id_accepted_by_fkey: memberGone,
  invitations_role_check: fixed('validation', 'A role key may contain only lowercase letters, digits and hyphens (at most 64).'),
  invitations_status_check: fixed('validation', 'The invitation status is not one of the allowed values.'),
  invitations_delivery_check: fixed('validation', 'The invitation delivery is not one of the allowed values.'),

  // identity_links (migration 008)
  identity_links_pair_unique: {
    kind: 'conflict',
    detail: (e) => {
      const pair = /\(issuer, organization_id\)=\((.*)\)/.exec(e.detail ?? '')?.[1];
      return pair ? `The identity link (${pair}) already belongs to a tenant.` : 'This identity link already belongs to a tenant.';
    },
  },
  identity_links_issuer_check: fixed('validation', 'identity_links[].issuer must be 1 to 2048 characters.'),
  identity_links_organization_id_check: fixed('validation', 'identity_links[].organization_id must be 1 to 255 characters.'),
  identity_links_tenant_id_fkey: tenantGone,

  // idempotency_keys (IdempotencyKeyRow)
  idempotency_keys_pkey: fixed('conflict', 'The Idempotency-Key is being used by a concurrent request; retry it.'),
  idempotency_keys_tenant_id_fkey: tenantGone,

  // permissions and roles (docs/roles.md)
  permissions_pkey: fixed('conflict', 'A permission with this key already exists.'),
  permissions_key_check: fixed('validation', "A permission key is segments of a-z 0-9 . _ - joined by ':' (at most 100 characters)."),
  platform_roles_pkey: fixed('conflict', 'A platform role with this key already exists.'),
  tenant_roles_pkey: fixed('conflict', 'This tenant already has a role with this key.'),
  tenant_roles_tenant_id_fkey: tenantGone,
  platform_role_permissions_permission_key_fkey: fixed('validation', 'A permission of the role was deleted from the catalogue while the request ran.'),
  tenant_role_permissions_permission_key_fkey: fixed('validation', 'A permission of the role was deleted from the catalogue while the request ran.'),
  tenant_role_permissions_tenant_id_role_key_fkey: fixed('notFound', 'The role was deleted while the request ran.'),
  platform_role_permissions_role_key_fkey: fixed('notFound', 'The role was deleted while the request ran.'),
};

/**
 * The driver's error behind `err`: Objection wraps PostgreSQL errors (UniqueViolationError,
 * ForeignKeyViolationError, DBError…) and keeps the original as `nativeError`.
 */
export function nativeDatabaseError(err: unknown): unknown {
  if (err && typeof err === 'object' && 'nativeError' in err) {
    const native = (err as { nativeError?: unknown }).nativeError;
    if (native && typeof native === 'object') return native;
  }
  return err;
}

/** True when `err` is a unique violation of `constraint`. */
export function isUniqueViolation(err: unknown, constraint: string): boolean {
  const e = nativeDatabaseError(err) as { code?: unknown; constraint?: unknown } | null;
  return !!e && typeof e === 'object' && e.code === '23505' && e.constraint === constraint;
}

/** The entry for a violated constraint, or undefined when the catalog should use the SQLSTATE class. */
export function constraintError(e: ConstraintViolation): { kind: ErrorKind; detail: string } | undefined {
  const entry = Object.prototype.hasOwnProperty.call(CONSTRAINT_ERRORS, e.constraint) ? CONSTRAINT_ERRORS[e.constraint] : undefined;
  return entry && { kind: entry.kind, detail: entry.detail(e) };
}
