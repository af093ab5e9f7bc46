/**
 * Which migrations a database has and which this version would run on start, read without
 * changing anything (knex's own `migrate.list()` creates its tables first). For checking a
 * database before an upgrade: docs/operations.md, "Upgrades".
 */
import knexFactory from 'knex';
import { assertRolesCreatable, assertRolesUsable, DatabaseRolesError } from './database-roles';
import { appliedMigrations, knexLog, MIGRATION_NAMES } from './database';

export interface AppliedMigration {
  name: string;
  /** When it ran (ISO 8601). */
  migrated_at: string;
}

export interface MigrationStatus {
  /** Applied migrations this version knows, in the order they ran. */
  applied: AppliedMigration[];
  /** Migrations this version runs on its next start. */
  pending: string[];
  /** Applied migrations this version does not know: the database belongs to a newer version. */
  unknown: AppliedMigration[];
  /** Null when the configured user can create (or already uses) the runtime roles, else why not. */
  roles_problem: string | null;
}

/** Reads the migration state of the database at `url` as its (owner) user. */
export async function readMigrationStatus(url: string): Promise<MigrationStatus> {
  const db = knexFactory({
    client: 'pg',
    connection: { connectionString: url, connectionTimeoutMillis: 5_000, statement_timeout: 10_000 },
    pool: { min: 0, max: 1 },
    log: knexLog(undefined), // a connection failure is reported once, by the caller, without a stack
  });
  try {
    const rows = await appliedMigrations(db);
    const known = new Set(MIGRATION_NAMES);
    const done = new Set(rows.map((r) => r.name));
    const toApplied = (r: { name: string; migration_time: Date }): AppliedMigration => ({ name: r.name, migrated_at: new Date(r.migration_time).toISOString() });
    let rolesProblem: string | null = null;
    try {
      await assertRolesCreatable(db);
      // Before the first migration nobody has granted the memberships yet; migration 001 does.
      if (done.has(MIGRATION_NAMES[0]!)) await assertRolesUsable(db);
    } catch (err) {
      if (!(err instanceof DatabaseRolesError)) throw err;
      rolesProblem = err.message;
    }
    return {
      applied: rows.filter((r) => known.has(r.name)).map(toApplied),
      pending: MIGRATION_NAMES.filter((n) => !done.has(n)),
      unknown: rows.filter((r) => !known.has(r.name)).map(toApplied),
      roles_problem: rolesProblem,
    };
  } finally {
    await db.destroy();
  }
}
