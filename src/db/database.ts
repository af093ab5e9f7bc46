/**
 * The connection pool and migrations. Queries run under the runtime role (no BYPASSRLS), so
 * row-level security applies to everything the service does with tenant data.
 */
import knexFactory, { type Knex } from 'knex';
import { Model } from 'objection';
import type { Logger } from 'pino';
import * as schema from './migrations/001-schema';
import * as foreignKeyIndexes from './migrations/002-foreign-key-indexes';
import * as tenantSearchIndex from './migrations/003-tenant-search-index';
import { APP_ROLE } from './migrations/001-schema';

export interface DatabaseOptions {
  url: string;
  /** Pool size (default 10). */
  poolMax?: number;
  /** Per-statement timeout in milliseconds (default 30 s). */
  statementTimeoutMs?: number;
}

const MIGRATIONS: Record<string, { up(k: Knex): Promise<void>; down(k: Knex): Promise<void> }> = {
  '001-schema': schema,
  '002-foreign-key-indexes': foreignKeyIndexes,
  '003-tenant-search-index': tenantSearchIndex,
};

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

/** Opens the pool. Every pooled connection switches to the runtime role before first use. */
export function openDatabase(opts: DatabaseOptions): Knex {
  const statementTimeout = opts.statementTimeoutMs ?? 30_000;
  const db = knexFactory({
    client: 'pg',
    connection: {
      connectionString: opts.url,
      statement_timeout: statementTimeout,
      connectionTimeoutMillis: 5_000,
      keepAlive: true,
    },
    pool: {
      min: 0,
      max: opts.poolMax ?? 10,
      afterCreate(conn: { query: (sql: string, cb: (err: Error | null) => void) => void }, done: (err: Error | null, c: unknown) => void) {
        conn.query(`SET ROLE ${APP_ROLE}`, (err) => done(err, conn));
      },
    },
    acquireConnectionTimeout: 10_000,
  });
  Model.knex(db);
  return db;
}

const MIGRATION_LOCK = 7_284_019_551; // pg_advisory_lock key: one migrator at a time per database

/**
 * Runs the migrations and ensures the default tenant exists. Safe to run twice and from several
 * instances at once: a session advisory lock serialises them. Uses its own connection as the
 * configured (owner) user, not the runtime role.
 */
export async function migrate(url: string, defaultTenantSlug: string, log: Logger): Promise<void> {
  // One connection (min = max = 1), so the session advisory lock and the migrations share it.
  const admin = knexFactory({ client: 'pg', connection: { connectionString: url }, pool: { min: 1, max: 1 } });
  try {
    await admin.raw('select pg_advisory_lock(?)', [MIGRATION_LOCK]);
    try {
      const [batch, done] = await admin.migrate.latest({
        migrationSource: new StaticMigrationSource(),
        tableName: 'knex_migrations',
      });
      if (done.length) log.info({ batch, migrations: done }, 'Database migrated');
      await admin.transaction((trx) => ensureDefaultTenant(trx, defaultTenantSlug, log));
    } finally {
      await admin.raw('select pg_advisory_unlock(?)', [MIGRATION_LOCK]);
    }
  } finally {
    await admin.destroy();
  }
}

async function ensureDefaultTenant(trx: Knex.Transaction, slug: string, log: Logger): Promise<void> {
  const existing = await trx('tenants').where({ is_default: true }).first('id', 'slug');
  if (existing) {
    if (existing.slug !== slug) {
      log.warn({ stored: existing.slug, configured: slug }, 'The default tenant keeps its original slug; SERVICE_DEFAULT_TENANT_SLUG is used only when creating it');
    }
    return;
  }
  const taken = await trx('tenants').where({ slug }).first('id');
  if (taken) {
    // A tenant with the configured slug exists but is not marked default (the default was deleted
    // in multi-tenant mode and the slug reused): it becomes the default again.
    await trx('tenants').where({ id: taken.id }).update({ is_default: true, updated_at: trx.fn.now() });
    log.warn({ slug }, 'Existing tenant marked as the default tenant');
    return;
  }
  await trx('tenants').insert({ name: 'Default', slug, is_default: true });
  log.info({ slug }, 'Default tenant created');
}
