-- The two roles tenant-service runs its statements as, for clusters where the service's own
-- database user may not create roles. Run once per PostgreSQL cluster (roles are cluster-wide),
-- as a superuser, naming the user the service connects as (SERVICE_DATABASE_URL):
--
--   psql "postgres://postgres@db.internal/postgres" -v service_user=tenant_owner -f docs/sql/create-roles.sql
--
-- Safe to run again (it also repairs attributes and memberships). See docs/operations.md,
-- "Database roles". The attributes are the ones migration 001 gives the roles when the service
-- creates them itself.
\set ON_ERROR_STOP on
-- A second run's "already a member" notices say nothing worth reading.
SET client_min_messages = warning;
\if :{?service_user}
\else
DO $$ BEGIN RAISE EXCEPTION 'Name the service database user: psql -v service_user=<user> -f docs/sql/create-roles.sql'; END $$;
\endif

-- The runtime role: every request's statements run as it, so row-level security applies
-- (NOBYPASSRLS). It never logs in; the service user switches to it with SET ROLE.
SELECT NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'tenant_service_app') AS create_app \gset
\if :create_app
CREATE ROLE tenant_service_app NOLOGIN NOSUPERUSER NOBYPASSRLS NOCREATEDB NOCREATEROLE;
\endif
ALTER ROLE tenant_service_app NOLOGIN NOSUPERUSER NOBYPASSRLS NOCREATEDB NOCREATEROLE;

-- The read-only platform role (the isolation audit, a caller's own tenants): it reads across
-- tenants, so it bypasses row-level security, and is granted SELECT only by the migrations.
SELECT NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'tenant_service_reader') AS create_reader \gset
\if :create_reader
CREATE ROLE tenant_service_reader NOLOGIN NOSUPERUSER BYPASSRLS NOCREATEDB NOCREATEROLE;
\endif
ALTER ROLE tenant_service_reader NOLOGIN NOSUPERUSER BYPASSRLS NOCREATEDB NOCREATEROLE;

-- The service user must be able to SET ROLE to both (membership, not inheritance of rights).
GRANT tenant_service_app TO :"service_user";
GRANT tenant_service_reader TO :"service_user";
