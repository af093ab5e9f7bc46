/**
 * The connection pool and migrations. Queries run under the runtime role (no BYPASSRLS), set per
 * transaction (./tenant-scope.ts), so row-level security applies to everything the service does
 * with tenant data, directly connected or behind a transaction pooler.
 */
import knexFactory, { type Knex } from 'knex';
import type { Logger } from 'pino';
import * as schema from './migrations/001-schema';
import * as foreignKeyIndexes from './migrations/002-foreign-key-indexes';
import * as tenantSearchIndex from './migrations/003-tenant-search-index';
import * as membership from './migrations/004-membership';
import * as events from './migrations/005-events';
import * as tenantSearchFolded from './migrations/006-tenant-search-folded';
import * as webhookOutboxIndependent from './migrations/007-webhook-outbox-independent';
import * as tenantTokenKeys from './migrations/008-tenant-token-keys';
import * as tenantFacts from './migrations/009-tenant-facts';
import * as consoleSignInCodes from './migrations/012-console-sign-in-codes';
import * as memberRemovals from './migrations/016-member-removals';
import { assertRolesCreatable, assertRolesUsable } from './database-roles';
import * as tenantLifecycle from './migrations/014-tenant-lifecycle';
import * as roles from './migrations/015-roles';
import * as decisionFactsNotify from './migrations/017-decision-facts-notify';
import * as directorySync from './migrations/018-directory-sync';
import * as directoryExistingMembers from './migrations/019-directory-existing-members';
import * as verifiedDomains from './migrations/024-verified-domains';
import * as systemPermissions from './migrations/025-system-permissions';
import * as oidcClients from './migrations/026-oidc-clients';
import * as oidcProvider from './migrations/027-oidc-provider';
import * as ssoConnections from './migrations/028-sso-connections';
import * as signInEmailCodes from './migrations/031-sign-in-email-codes';
import * as directoryUserAttributes from './migrations/032-directory-user-attributes';
import * as tenantStatuses from './migrations/033-tenant-statuses';
import { TENANT_STATUSES } from '../context/tenant-status';
import { TenantRow } from './models';
import { APP_ROLE } from './schema';


/** The request pool's size; the fairness stage lets as many requests do database work at once. */
export const POOL_SIZE = 10;
export interface DatabaseOptions {
  url: string;
  /** Pool size (default POOL_SIZE). */
  poolMax?: number;
  /** Per-statement timeout in milliseconds (default 30 s). */
  statementTimeoutMs?: number;
  /**
   * Client-side limit on waiting for a query's answer (default: statement timeout + 2 s). The
   * statement timeout is enforced by the server, so a server that does not answer at all
   * (stopped, hung, partitioned) needs this one; the connection is then discarded. It also
   * bounds waiting for a pooled connection (at most 10 s) and connecting (at most 5 s).
   */
  queryTimeoutMs?: number;
  /**
   * Prepare the hot statements (entering a tenant, the boards page) once per connection (default
   * true). False behind a transaction pooler that does not keep prepared statements across
   * transactions (PgBouncer before 1.21, or without max_prepared_statements, in transaction mode).
   */
  preparedStatements?: boolean;
  /** Where knex's own warnings and errors go (default: nowhere; never plain text on stdout). */
  logger?: Logger;
}

/**
 * knex's `log` option: its warnings ("Acquire connection error: <stack>", "Connection Error")
 * and errors become pino lines instead of plain-text console output in the JSON log stream.
 * The first line is kept (the stack adds nothing an operator can act on; the request that
 * failed logs its own error). Without a logger they are dropped: every failure they describe
 * also reaches the caller of the query, which logs or reports it.
 */
export function knexLog(logger: Logger | undefined): Knex.Config['log'] {
  const firstLine = (m: unknown) => (typeof m === 'string' ? m : String((m as { message?: unknown })?.message ?? m)).split('\n')[0]!.slice(0, 500);
  const log = logger?.child({ component: 'knex' });
  return {
    warn: (m: unknown) => log?.warn({ knex_message: firstLine(m) }, 'Database client warning'),
    error: (m: unknown) => log?.error({ knex_message: firstLine(m) }, 'Database client error'),
    deprecate: (m: unknown) => log?.warn({ knex_message: firstLine(m) }, 'Database client deprecation'),
    debug: (m: unknown) => log?.debug({ knex_message: firstLine(m) }, 'Database client debug'),
  };
}

const MIGRATIONS: Record<string, { up(k: Knex): Promise<void>; down(k: Knex): Promise<void> }> = {
  '001-schema': schema,
  '002-foreign-key-indexes': foreignKeyIndexes,
  '003-tenant-search-index': tenantSearchIndex,
  '004-membership': membership,
  '005-events': events,
  '006-tenant-search-folded': tenantSearchFolded,
  '007-webhook-outbox-independent': webhookOutboxIndependent,
  '008-tenant-token-keys': tenantTokenKeys,
  '009-tenant-facts': tenantFacts,
  '012-console-sign-in-codes': consoleSignInCodes,
  '014-tenant-lifecycle': tenantLifecycle,
  '015-roles': roles,
  '016-member-removals': memberRemovals,
  '017-decision-facts-notify': decisionFactsNotify,
  '018-directory-sync': directorySync,
  '019-directory-existing-members': directoryExistingMembers,
  '024-verified-domains': verifiedDomains,
  '025-system-permissions': systemPermissions,
  '026-oidc-clients': oidcClients,
  '027-oidc-provider': oidcProvider,
  '028-sso-connections': ssoConnections,
  '031-sign-in-email-codes': signInEmailCodes,
  '032-directory-user-attributes': directoryUserAttributes,
  '033-tenant-statuses': tenantStatuses,
};

/** The migrations this version knows, in the order they run. */
export const MIGRATION_NAMES: readonly string[] = Object.keys(MIGRATIONS);
/** knex's record of the migrations applied to a database. */
export const MIGRATIONS_TABLE = 'knex_migrations';

/** A database migrated by a newer version, whose schema this version does not know. */
export class NewerDatabaseError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'NewerDatabaseError';
  }
}

/** The migrations recorded in a database, in the order they ran (none before its first start). */
export async function appliedMigrations(db: Knex): Promise<Array<{ name: string; migration_time: Date }>> {
  const { rows } = await db.raw<{ rows: Array<{ present: boolean }> }>('select to_regclass(?) is not null as present', [MIGRATIONS_TABLE]);
  if (!rows[0]!.present) return [];
  return (await db.raw<{ rows: Array<{ name: string; migration_time: Date }> }>(`select name, migration_time from ${MIGRATIONS_TABLE} order by id`)).rows;
}

/** The latest migration's name: the schema version an export names and an import must match. */
export const SCHEMA_VERSION = Object.keys(MIGRATIONS).at(-1)!;

/** Keeps the migrations in this module, so compiled and ts-jest runs find the same list. */
class StaticMigrationSource implements Knex.MigrationSource<string> {
  async getMigrations(): Promise<string[]> {
    return Object.keys(MIGRATIONS);
  }
  getMigrationName(m: string): string {
    return m;
  }
  async getMigration(m: string) {
    return MIGRATIONS[m]!;
  }
}

/**
 * Opens the pool. Every transaction of the service sets the runtime (or reader) role as its first
 * statement (withTenant, withService, withPlatformRead, withTenantFacts), so the role holds
 * whatever pooler sits in between; a direct connection also starts as the runtime role.
 */
export function openDatabase(opts: DatabaseOptions): Knex {
  const statementTimeout = opts.statementTimeoutMs ?? 30_000;
  const queryTimeout = opts.queryTimeoutMs ?? statementTimeout + QUERY_TIMEOUT_GRACE_MS;
  const db = knexFactory({
    client: 'pg',
    connection: {
      connectionString: opts.url,
      statement_timeout: statementTimeout,
      query_timeout: queryTimeout,
      connectionTimeoutMillis: Math.min(5_000, queryTimeout),
      keepAlive: true,
    },
    pool: {
      min: 0,
      max: opts.poolMax ?? POOL_SIZE,
      // A safety net only: every transaction of the service sets its role itself
      // (./tenant-scope.ts), which is what holds behind a transaction pooler, where this
      // session-level SET ROLE lands on one server connection and is not followed. On a direct
      // connection it keeps a statement that skipped those helpers out of the owner's rights.
      afterCreate(conn: { query: (sql: string, cb: (err: Error | null) => void) => void }, done: (err: Error | null, c: unknown) => void) {
        conn.query(`SET ROLE ${APP_ROLE}`, (err) => done(err, conn));
      },
    },
    acquireConnectionTimeout: Math.min(10_000, queryTimeout),
    log: knexLog(opts.logger),
    // Read by preparedName (src/db/request-transaction.ts); knex ignores keys it does not know.
    preparedStatements: opts.preparedStatements ?? true,
  } as Knex.Config);
  return db;
}

/**
 * A small pool as the configured user itself (the schema owner), WITHOUT switching to the
 * runtime role: only for work the runtime role may not do, i.e. the events retention purge.
 * Not bound to Objection. Close it after use.
 */
export function openOwnerDatabase(url: string): Knex {
  return knexFactory({
    client: 'pg',
    connection: { connectionString: url, statement_timeout: 300_000, connectionTimeoutMillis: 5_000 },
    pool: { min: 0, max: 2 },
  });
}

// --- Client-side query timeout (docs/security.md#security-and-robustness) ---------

/**
 * How much longer than the statement timeout the client waits before giving up on an answer.
 * A connection whose query timed out is closed by ./request-transaction.ts, not reused.
 */
export const QUERY_TIMEOUT_GRACE_MS = 2_000;

const MIGRATION_LOCK = 7_284_019_551; // pg_advisory_lock key: one migrator at a time per database

/**
 * Runs the migrations and ensures the default tenant exists. Safe to run twice and from several
 * instances at once: a session advisory lock serialises them. Uses its own connection as the
 * configured (owner) user, not the runtime role.
 */
export async function migrate(url: string, defaultTenantSlug: string, log: Logger): Promise<void> {
  // One connection (min = max = 1), so the session advisory lock and the migrations share it.
  const admin = knexFactory({ client: 'pg', connection: { connectionString: url }, pool: { min: 1, max: 1 }, log: knexLog(log) });
  try {
    // Roles first: a user that may not create or use them gets one sentence naming the DBA's SQL.
    await assertRolesCreatable(admin);
    await admin.raw('select pg_advisory_lock(?)', [MIGRATION_LOCK]);
    try {
      const unknown = (await appliedMigrations(admin)).map((m) => m.name).filter((n) => !MIGRATION_NAMES.includes(n));
      if (unknown.length) {
        throw new NewerDatabaseError(
          `This database was migrated by a newer tenant-service (${unknown.join(', ')} unknown to this version): start that version or a later one, or restore the backup taken before the upgrade (docs/operations.md, "Upgrades")`,
        );
      }
      const [batch, done] = await admin.migrate.latest({
        migrationSource: new StaticMigrationSource(),
        tableName: MIGRATIONS_TABLE,
      });
      if (done.length) log.info({ batch, migrations: done }, 'Database migrated');
      await assertRolesUsable(admin);
      await ensureTenantStatuses(admin);
      await admin.transaction((trx) => ensureDefaultTenant(trx, defaultTenantSlug, log));
    } finally {
      await admin.raw('select pg_advisory_unlock(?)', [MIGRATION_LOCK]);
    }
  } finally {
    await admin.destroy();
  }
}

/**
 * The statuses of the lifecycle table (src/context/tenant-status.ts) as rows of
 * `tenant_statuses`, which `tenants.status` references (migration 033): a state added to the
 * table is a status the database accepts from this start on. Never deletes one.
 */
async function ensureTenantStatuses(admin: Knex): Promise<void> {
  await admin.raw('insert into tenant_statuses (status) select unnest(?::text[]) on conflict do nothing', [[...TENANT_STATUSES]]);
}

async function ensureDefaultTenant(trx: Knex.Transaction, slug: string, log: Logger): Promise<void> {
  const existing = await TenantRow.query(trx).findOne({ is_default: true }).select('id', 'slug');
  if (existing) {
    if (existing.slug !== slug) {
      log.warn({ stored: existing.slug, configured: slug }, 'The default tenant keeps its original slug; SERVICE_DEFAULT_TENANT_SLUG is used only when creating it');
    }
    return;
  }
  const taken = await TenantRow.query(trx).findOne({ slug }).select('id');
  if (taken) {
    // The default tenant is the tenant marked default, never one found by its slug: adopting a
    // tenant someone else created (and administers) under that slug would hand them every
    // single-tenant caller. Nothing is created or adopted; setup status reports it.
    log.error(
      { slug, tenant_id: taken.id },
      'The default tenant is missing and another tenant holds its slug: not adopting it. Rename or delete that tenant, or set SERVICE_DEFAULT_TENANT_SLUG to a free slug, and restart',
    );
    return;
  }
  await TenantRow.query(trx).insert({ name: 'Default', slug, is_default: true });
  log.info({ slug }, 'Default tenant created');
}
