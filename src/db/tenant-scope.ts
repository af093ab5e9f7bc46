/**
 * Every transaction the service runs starts here, and its first statement sets the database role
 * for that transaction alone (`set_config('role', …, true)`, i.e. SET LOCAL ROLE):
 *
 * - `withTenant`: the runtime role (no BYPASSRLS) and `app.tenant_id`, so row-level security
 *   confines every statement to that tenant;
 * - `withService`: the runtime role without a tenant (platform tables; tenant rows invisible);
 * - `withPlatformRead`: the read-only reader role that sees every tenant (audit, own memberships).
 *
 * Why per transaction and not per connection: behind a transaction pooler (PgBouncer
 * `pool_mode = transaction`) consecutive transactions of one client connection run on different
 * server connections, so session state such as `SET ROLE` is lost or leaks; a transaction-local
 * setting is in force exactly for the statements of its transaction, whatever sits in between.
 * The role and the tenant are set by one statement, so this costs no extra round trip.
 */
import type { Knex } from 'knex';
import { runStatement, runTransaction, withConnection } from './request-transaction';
import { APP_ROLE, READER_ROLE } from './schema';

/** A transaction of the service, as domain code passes it around (domain code never imports knex). */
export type Transaction = Knex.Transaction;
/** The pool. */
export type Database = Knex;

/** Options of a service transaction. */
export interface TransactionOptions {
  readonly isolationLevel?: 'read committed' | 'repeatable read' | 'serializable';
  readonly readOnly?: boolean;
}

/** Runs `fn` in a transaction confined to one tenant by row-level security. */
export async function withTenant<T>(db: Knex, tenantId: string, fn: (trx: Knex.Transaction) => Promise<T>): Promise<T> {
  return runTransaction(db, async (trx) => {
    await setTenantScope(trx, tenantId);
    return fn(trx);
  });
}

/**
 * Runs `fn` in a read-only repeatable-read transaction confined to one tenant: every statement
 * sees one snapshot, however long `fn` streams (an export).
 */
export async function withTenantSnapshot<T>(db: Knex, tenantId: string, fn: (trx: Knex.Transaction) => Promise<T>): Promise<T> {
  return runTransaction(
    db,
    async (trx) => {
      await setTenantScope(trx, tenantId);
      return fn(trx);
    },
    { isolationLevel: 'repeatable read', readOnly: true },
  );
}

/**
 * Switches an open service transaction to `tenantId` (the role stays the runtime role): after a
 * tenant row is inserted, its first rows are written under its own row-level security.
 */
export async function setTenantScope(trx: Knex.Transaction, tenantId: string): Promise<void> {
  await trx.raw("select set_config('role', ?, true), set_config('app.tenant_id', ?, true)", [APP_ROLE, tenantId]);
}

/**
 * Runs `fn` in a transaction under the runtime role and no tenant: for the platform tables
 * (tenants, idempotency keys). Tenant-owned rows are invisible until `setTenantScope`.
 */
export async function withService<T>(db: Knex, fn: (trx: Knex.Transaction) => Promise<T>, opts: TransactionOptions = {}): Promise<T> {
  return runTransaction(
    db,
    async (trx) => {
      await trx.raw("select set_config('role', ?, true)", [APP_ROLE]);
      return fn(trx);
    },
    opts,
  );
}

/**
 * Runs `fn` in a read-only transaction that sees every tenant's rows (the reader role, which
 * bypasses row-level security and can only SELECT). For platform-wide reads only: the audit,
 * and a caller's own memberships across tenants.
 */
export async function withPlatformRead<T>(db: Knex, fn: (trx: Knex.Transaction) => Promise<T>): Promise<T> {
  return runTransaction(
    db,
    async (trx) => {
      await trx.raw("select set_config('role', ?, true)", [READER_ROLE]);
      return fn(trx);
    },
    { readOnly: true },
  );
}

/**
 * `select 1` on a pooled connection: readiness. Reads nothing, so it needs no role. With
 * `timeoutMs`, it fails after that long, waiting for a pooled connection included, and the query
 * carries that client-side timeout too, so a server that does not answer (SIGSTOP) costs the
 * pool that connection (discarded) for `timeoutMs`, not for the statement timeout.
 */
export async function pingDatabase(db: Knex, timeoutMs?: number): Promise<void> {
  if (timeoutMs === undefined) {
    await db.raw('select 1');
    return;
  }
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`The database did not answer within ${timeoutMs} ms`)), timeoutMs);
  });
  // On its own connection, so one that timed out is closed rather than handed out again.
  const query = withConnection(db, (connection) => runStatement(connection, 'select 1', undefined, undefined, timeoutMs));
  query.catch(() => undefined); // settles after the race is lost; its error is not news
  try {
    await Promise.race([query, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Runs `fn` in a savepoint of `trx`: when it throws, only its statements (and the settings it
 * made, such as the tenant) are rolled back, and `trx` goes on.
 */
export async function withSavepoint<T>(trx: Knex.Transaction, fn: (sp: Knex.Transaction) => Promise<T>): Promise<T> {
  return trx.transaction(fn);
}
