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
import { escapeLiteral } from 'pg';
import { runStatement, runStatements, runTransaction, withConnection, type PgResult } from './request-transaction';
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

/** A value of `serviceStatements`, sent as a literal. */
export type SqlLiteral = string | number | boolean | null;

function literal(v: SqlLiteral | undefined): string {
  if (v === undefined) throw new Error('serviceStatements: a placeholder has no value.');
  if (v === null) return 'NULL';
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  if (typeof v === 'number') {
    if (!Number.isFinite(v)) throw new Error('serviceStatements: a number value must be finite.');
    // In parentheses, so a cast after it (`$1::int`) applies to the number, sign included.
    return `(${String(v)})`;
  }
  return escapeLiteral(v);
}

/** Whose rows statements in one round trip see: as `withService`, `withTenant` or `withPlatformRead`. */
type OneTripScope = { readonly tenantId: string } | 'service' | 'platformRead';

function scopeStatement(scope: OneTripScope): string {
  if (scope === 'platformRead') return `select set_config('role', ${escapeLiteral(READER_ROLE)}, true)`;
  if (scope === 'service') return `select set_config('role', ${escapeLiteral(APP_ROLE)}, true)`;
  return `select set_config('role', ${escapeLiteral(APP_ROLE)}, true), set_config('app.tenant_id', ${escapeLiteral(scope.tenantId)}, true)`;
}

async function oneTrip(db: Knex, scope: OneTripScope, statements: readonly string[], values: readonly SqlLiteral[]): Promise<PgResult[]> {
  const text = [
    scopeStatement(scope),
    ...statements.map((sql) => sql.replace(/\$(\d+)/g, (_, n: string) => literal(values[Number(n) - 1]))),
  ].join(';\n');
  // The reader's statements may only read, as in withPlatformRead's read-only transaction.
  const results = await withConnection(db, (connection) => runStatements(connection, scope === 'platformRead' ? `set transaction read only;\n${text}` : text));
  return results.slice(scope === 'platformRead' ? 2 : 1);
}

/**
 * Runs `statements` (SQL with `$1`… placeholders over `values`) under the runtime role and no
 * tenant, in one round trip: the role and the statements travel as one simple-protocol message,
 * which PostgreSQL runs as one implicit transaction, so the transaction-local role holds for
 * exactly these statements (behind a transaction pooler too) and they commit or fail together.
 * Values travel as literals quoted by pg's `escapeLiteral`. For short, hot statements (the
 * provider's protocol objects, the sign-in's lookups), where a transaction's four round trips
 * (BEGIN, role, statement, COMMIT) cost more than the statement. Returns each statement's result.
 */
export function serviceStatements(db: Knex, statements: readonly string[], values: readonly SqlLiteral[]): Promise<PgResult[]> {
  return oneTrip(db, 'service', statements, values);
}

/** `serviceStatements` confined to one tenant by row-level security, as `withTenant`. */
export function tenantStatements(db: Knex, tenantId: string, statements: readonly string[], values: readonly SqlLiteral[]): Promise<PgResult[]> {
  return oneTrip(db, { tenantId }, statements, values);
}

/** `serviceStatements` as the read-only reader role that sees every tenant, as `withPlatformRead`. */
export function platformReadStatements(db: Knex, statements: readonly string[], values: readonly SqlLiteral[]): Promise<PgResult[]> {
  return oneTrip(db, 'platformRead', statements, values);
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
