/**
 * A description of a database's schema, for comparing with the committed snapshot
 * (test/operations/schema-snapshot.json): tables (with row-level security flags), columns, constraints,
 * indexes, policies, grants, functions, extensions and the service's roles. Everything is sorted,
 * so equal schemas give equal JSON. Tooling tables (knex_migrations*) and extension-owned
 * objects are left out.
 */
import { Client } from 'pg';

export interface SchemaSnapshot {
  tables: unknown[];
  columns: unknown[];
  constraints: unknown[];
  indexes: unknown[];
  policies: unknown[];
  tableGrants: unknown[];
  functionGrants: unknown[];
  schemaGrants: unknown[];
  functions: unknown[];
  extensions: unknown[];
  roles: unknown[];
}

const ROLES = ['tenant_service_app', 'tenant_service_reader'];

export async function readSchemaSnapshot(url: string): Promise<SchemaSnapshot> {
  const c = new Client({ connectionString: url });
  await c.connect();
  try {
    const q = async (sql: string, params: unknown[] = []) => (await c.query(sql, params)).rows;
    return {
      tables: await q(`
        select c.relname as table, c.relrowsecurity as rls_enabled, c.relforcerowsecurity as rls_forced
          from pg_class c
         where c.relnamespace = 'public'::regnamespace and c.relkind in ('r', 'p') and c.relname not like 'knex\\_migrations%'
           and not exists (select 1 from pg_depend d where d.objid = c.oid and d.deptype = 'e')
         order by 1`),
      columns: await q(`
        select table_name as table, column_name as column, ordinal_position as position, data_type as type,
               character_maximum_length as max_length, is_nullable = 'YES' as nullable, column_default as default,
               is_identity = 'YES' as identity, identity_generation, is_generated
          from information_schema.columns
         where table_schema = 'public' and table_name not like 'knex\\_migrations%'
         order by 1, 3`),
      constraints: await q(`
        select conrelid::regclass::text as table, conname as name, contype as type, pg_get_constraintdef(oid) as definition
          from pg_constraint
         where connamespace = 'public'::regnamespace and conrelid::regclass::text not like 'knex\\_migrations%'
         order by 1, 2`),
      indexes: await q(`
        select tablename as table, indexname as name, indexdef as definition
          from pg_indexes
         where schemaname = 'public' and tablename not like 'knex\\_migrations%'
         order by 1, 2`),
      policies: await q(`
        select tablename as table, policyname as name, permissive, roles::text[] as roles, cmd, qual, with_check
          from pg_policies where schemaname = 'public' order by 1, 2`),
      tableGrants: await q(`
        select grantee, table_name as table, string_agg(privilege_type, ',' order by privilege_type) as privileges
          from information_schema.role_table_grants
         where table_schema = 'public' and grantee = any($1)
         group by 1, 2 order by 1, 2`, [ROLES]),
      functionGrants: await q(`
        select grantee, routine_name as function, privilege_type as privilege
          from information_schema.role_routine_grants
         where routine_schema = 'public' and grantee = any($1)
         order by 1, 2, 3`, [ROLES]),
      schemaGrants: await q(`
        select r.rolname as role, has_schema_privilege(r.oid, 'public', 'USAGE') as usage, has_schema_privilege(r.oid, 'public', 'CREATE') as create
          from pg_roles r where r.rolname = any($1) order by 1`, [ROLES]),
      functions: await q(`
        select p.proname as name, pg_get_function_identity_arguments(p.oid) as arguments, pg_get_function_result(p.oid) as result,
               p.prosecdef as security_definer, p.provolatile as volatility, p.proconfig as config,
               md5(p.prosrc) as body_md5
          from pg_proc p
         where p.pronamespace = 'public'::regnamespace
           and not exists (select 1 from pg_depend d where d.objid = p.oid and d.deptype = 'e')
         order by 1, 2`),
      extensions: await q(`select extname as name from pg_extension order by 1`),
      roles: await q(`
        select rolname as name, rolsuper as superuser, rolbypassrls as bypass_rls, rolcanlogin as login,
               rolcreatedb as create_db, rolcreaterole as create_role, rolinherit as inherit
          from pg_roles where rolname = any($1) order by 1`, [ROLES]),
    };
  } finally {
    await c.end();
  }
}
