/**
 * The two cluster-wide roles the service runs its statements as (./schema.ts). Migration 001
 * creates them when the configured user may; where a DBA keeps CREATEROLE to themselves, they
 * run docs/sql/create-roles.sql once per cluster instead. These checks turn the failures that
 * would follow (a migration's "permission denied to create role", a pool's "permission denied
 * to set role") into one sentence naming that file (docs/operations.md, "Database roles").
 */
import type { Knex } from 'knex';
import { APP_ROLE, READER_ROLE } from './schema';

/** Where the SQL a DBA runs is shipped, relative to the package root. */
export const CREATE_ROLES_SQL = 'docs/sql/create-roles.sql';

/** A configured database user that cannot create or use the runtime roles. */
export class DatabaseRolesError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DatabaseRolesError';
  }
}

interface RoleFacts {
  user: string;
  superuser: boolean;
  createrole: boolean;
  bypassrls: boolean;
  version: number;
  app: boolean;
  reader: boolean;
}

async function roleFacts(db: Knex | Knex.Transaction): Promise<RoleFacts> {
  const { rows } = await db.raw<{ rows: RoleFacts[] }>(
    `select current_user as "user", r.rolsuper as superuser, r.rolcreaterole as createrole, r.rolbypassrls as bypassrls,
            current_setting('server_version_num')::int as version,
            exists (select 1 from pg_roles where rolname = ?) as app,
            exists (select 1 from pg_roles where rolname = ?) as reader
       from pg_roles r where r.rolname = current_user`,
    [APP_ROLE, READER_ROLE],
  );
  return rows[0]!;
}

const howToFix = (user: string) =>
  `a superuser runs ${CREATE_ROLES_SQL} once on this PostgreSQL cluster (psql -v service_user=${user} -f ${CREATE_ROLES_SQL}), see docs/operations.md "Database roles"`;

/**
 * Before migrating: refuses when a runtime role is missing and the configured user cannot
 * create it (CREATEROLE for the runtime role; BYPASSRLS as well for the reader, which before
 * PostgreSQL 16 only a superuser may grant).
 */
export async function assertRolesCreatable(db: Knex | Knex.Transaction): Promise<void> {
  const f = await roleFacts(db);
  if (f.superuser) return;
  const missing = [!f.app ? APP_ROLE : null, !f.reader ? READER_ROLE : null].filter((r): r is string => r !== null);
  const canCreateApp = f.createrole;
  const canCreateReader = f.createrole && f.bypassrls && f.version >= 160000;
  if ((!f.app && !canCreateApp) || (!f.reader && !canCreateReader)) {
    throw new DatabaseRolesError(`The database role${missing.length > 1 ? 's' : ''} ${missing.join(' and ')} ${missing.length > 1 ? 'do' : 'does'} not exist and ${f.user} may not create ${missing.length > 1 ? 'them' : 'it'}: ${howToFix(f.user)}`);
  }
}

/**
 * After migrating: refuses when the configured user is not a member of both roles, since every
 * transaction of the service begins with SET ROLE to one of them.
 */
export async function assertRolesUsable(db: Knex | Knex.Transaction): Promise<void> {
  const f = await roleFacts(db);
  if (f.superuser) return;
  const { rows } = await db.raw<{ rows: Array<{ app: boolean; reader: boolean }> }>(
    `select pg_has_role(current_user, ?, 'MEMBER') as app, pg_has_role(current_user, ?, 'MEMBER') as reader`,
    [APP_ROLE, READER_ROLE],
  );
  const notMember = [!rows[0]!.app ? APP_ROLE : null, !rows[0]!.reader ? READER_ROLE : null].filter((r): r is string => r !== null);
  if (notMember.length) {
    throw new DatabaseRolesError(`${f.user} is not a member of ${notMember.join(' and ')}, so it cannot switch to ${notMember.length > 1 ? 'them' : 'it'}: ${howToFix(f.user)}`);
  }
}
