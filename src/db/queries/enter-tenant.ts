/**
 * `app_enter_tenant`: resolution plus membership in the request's first statement. It sets
 * app.tenant_id for the transaction and reads (or, for IdP-asserted tenants, provisions) the
 * caller's membership under row-level security.
 */
import type { Knex } from 'knex';
import { APP_ROLE } from '../schema';
import { preparedName, runStatement, withRequestTransaction, type PgConnection } from '../request-transaction';

export interface EnterTenantParams {
  /** The tenant's slug; null with `tenantId` null means the default tenant (single-tenant mode). */
  readonly slug: string | null;
  readonly tenantId?: string | null;
  readonly issuer: string;
  readonly subject: string;
  /** Create the membership when missing (IdP-asserted tenant, or single-tenant mode). */
  readonly provision: boolean;
  readonly email: string | null;
  readonly displayName: string | null;
}

export interface EnterTenantRow {
  /** `current_user` in the same statement: must be the runtime role (checked, fail closed). */
  db_user: string;
  tenant_id: string;
  tenant_name: string;
  tenant_slug: string;
  tenant_settings: Record<string, unknown>;
  tenant_status: 'active' | 'pending_approval';
  tenant_is_default: boolean;
  tenant_created_at: Date;
  tenant_updated_at: Date;
  user_id: string | null;
  user_email: string | null;
  user_display_name: string | null;
  user_role: 'admin' | 'member' | null;
  user_created_at: Date | null;
  provisioned: boolean;
  /** The tenant's membership_policy (migration 004). */
  tenant_provision_from_claims: boolean;
  tenant_claims_issuer: string | null;
}

/**
 * The statement. The role is set while the function's arguments are evaluated
 * (`set_config('role', …, true)` inside the slug argument), before the function body runs, so no
 * extra round trip is spent and the function's queries run under row-level security even when
 * the connection came from a transaction pooler as the owner. `current_user`, read after the
 * function has run, is checked by `checkedRow`.
 */
const SQL = `select current_user::text as db_user, e.tenant_id, e.tenant_name, e.tenant_slug, e.tenant_settings,
   e.tenant_status, e.tenant_is_default, e.tenant_created_at, e.tenant_updated_at, e.user_id, e.user_email,
   e.user_display_name, e.user_role, e.user_created_at, e.provisioned, e.tenant_provision_from_claims,
   e.tenant_claims_issuer
 from app_enter_tenant(
   case when set_config('role', $1, true) is not null then $2::text end, $3::uuid, $4, $5, $6, $7, $8) e`;
/**
 * Its prepared name. The columns are listed, not `e.*`: a later migration that adds a column to
 * the function's result leaves this statement's result type, and so its prepared plan, valid on
 * instances still running the previous release. A change to the statement gets a new name.
 */
const NAME = 'tenant_service_enter_tenant_v1';

function values(p: EnterTenantParams): unknown[] {
  return [APP_ROLE, p.slug, p.tenantId ?? null, p.issuer, p.subject, p.provision, p.email, p.displayName];
}

/** The row, after checking the statement ran as the runtime role: a connection that did not
 * (a changed pool setup, a pooler) fails closed instead of serving tenant data without RLS. */
export function checkedRow(rows: EnterTenantRow[]): EnterTenantRow | null {
  const row = rows[0];
  if (!row) return null;
  if (row.db_user !== APP_ROLE) {
    throw new Error(`app_enter_tenant ran as '${row.db_user}', not the runtime role ${APP_ROLE}: refusing to serve tenant data without row-level security`);
  }
  return row;
}

/**
 * The single-round-trip path (GET /api/tenant): the same statement alone on a pooled connection
 * (same role setting, same statement timeout), without knex's query builder and without
 * BEGIN/COMMIT. The statement is its own transaction; its role and app.tenant_id end with it.
 */
export async function enterTenantOnce(db: Knex, p: EnterTenantParams): Promise<EnterTenantRow | null> {
  const client = db.client as unknown as { acquireConnection(): Promise<PgConnection>; releaseConnection(c: PgConnection): Promise<unknown> };
  const connection = await client.acquireConnection();
  try {
    return checkedRow(await runStatement<EnterTenantRow>(connection, SQL, values(p), preparedName(db, NAME)));
  } finally {
    await client.releaseConnection(connection);
  }
}

/**
 * Opens the request's transaction (src/db/request-transaction.ts) and runs the statement as its
 * first, then `fn` with the row (null when no tenant matched) inside the same transaction.
 */
export async function withEnteredTenant<T>(
  db: Knex,
  p: EnterTenantParams,
  fn: (row: EnterTenantRow | null, trx: Knex.Transaction) => Promise<T>,
): Promise<T> {
  const name = preparedName(db, NAME);
  return withRequestTransaction(db, async (connection) => checkedRow(await runStatement<EnterTenantRow>(connection, SQL, values(p), name)), fn);
}
