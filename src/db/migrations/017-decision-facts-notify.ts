/**
 * Decisions answered from memory (docs/architecture.md "Decisions from memory") stay fresh
 * because every write to a table `app_tenant_facts` reads notifies every instance from its own
 * transaction: PostgreSQL delivers a NOTIFY at commit, and not at all on rollback.
 *
 * One trigger function, attached per table (adding a table the facts read is one CREATE
 * TRIGGER line, and test/operations/decision-memory-triggers.test.ts fails until it is there). The payload
 * is `<tenant id or *> <epoch seconds of the transaction's start>`; a row without a tenant id
 * (a platform-wide fact) notifies `*`. Row-level: PostgreSQL folds identical payloads of one
 * transaction into one notification, so a bulk write of one tenant sends one.
 *
 * Tables and the channel are spelled literally: released migrations never import later constants.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
CREATE FUNCTION app_notify_decision_facts() RETURNS trigger LANGUAGE plpgsql SET search_path = pg_catalog, public AS $$
DECLARE
  tid text;
  col text := coalesce(TG_ARGV[0], 'tenant_id');
BEGIN
  IF TG_OP = 'TRUNCATE' THEN
    PERFORM pg_notify('tenant_service_decision_facts', '* ' || extract(epoch from now())::text);
    RETURN NULL;
  END IF;
  IF TG_OP IN ('UPDATE', 'DELETE') THEN
    tid := CASE WHEN col = '*' THEN '*' ELSE coalesce(to_jsonb(OLD) ->> col, '*') END;
    PERFORM pg_notify('tenant_service_decision_facts', tid || ' ' || extract(epoch from now())::text);
  END IF;
  IF TG_OP IN ('INSERT', 'UPDATE') THEN
    tid := CASE WHEN col = '*' THEN '*' ELSE coalesce(to_jsonb(NEW) ->> col, '*') END;
    PERFORM pg_notify('tenant_service_decision_facts', tid || ' ' || extract(epoch from now())::text);
  END IF;
  RETURN NULL;
END $$;

-- Platform-wide facts (the permission catalogue, platform roles) notify '*'.
CREATE TRIGGER decision_facts_notify AFTER INSERT OR UPDATE OR DELETE ON tenants
  FOR EACH ROW EXECUTE FUNCTION app_notify_decision_facts('id');
CREATE TRIGGER decision_facts_notify AFTER INSERT OR UPDATE OR DELETE ON users
  FOR EACH ROW EXECUTE FUNCTION app_notify_decision_facts('tenant_id');
CREATE TRIGGER decision_facts_notify AFTER INSERT OR UPDATE OR DELETE ON identity_links
  FOR EACH ROW EXECUTE FUNCTION app_notify_decision_facts('tenant_id');
CREATE TRIGGER decision_facts_notify AFTER INSERT OR UPDATE OR DELETE ON member_removals
  FOR EACH ROW EXECUTE FUNCTION app_notify_decision_facts('tenant_id');
CREATE TRIGGER decision_facts_notify AFTER INSERT OR UPDATE OR DELETE ON tenant_roles
  FOR EACH ROW EXECUTE FUNCTION app_notify_decision_facts('tenant_id');
CREATE TRIGGER decision_facts_notify AFTER INSERT OR UPDATE OR DELETE ON tenant_role_permissions
  FOR EACH ROW EXECUTE FUNCTION app_notify_decision_facts('tenant_id');
CREATE TRIGGER decision_facts_notify AFTER INSERT OR UPDATE OR DELETE ON platform_roles
  FOR EACH ROW EXECUTE FUNCTION app_notify_decision_facts('*');
CREATE TRIGGER decision_facts_notify AFTER INSERT OR UPDATE OR DELETE ON platform_role_permissions
  FOR EACH ROW EXECUTE FUNCTION app_notify_decision_facts('*');
CREATE TRIGGER decision_facts_notify AFTER INSERT OR UPDATE OR DELETE ON permissions
  FOR EACH ROW EXECUTE FUNCTION app_notify_decision_facts('*');
-- TRUNCATE fires no row trigger: it drops every instance's memory instead.
CREATE TRIGGER decision_facts_notify_truncate AFTER TRUNCATE ON tenants
  FOR EACH STATEMENT EXECUTE FUNCTION app_notify_decision_facts();
CREATE TRIGGER decision_facts_notify_truncate AFTER TRUNCATE ON users
  FOR EACH STATEMENT EXECUTE FUNCTION app_notify_decision_facts();
CREATE TRIGGER decision_facts_notify_truncate AFTER TRUNCATE ON identity_links
  FOR EACH STATEMENT EXECUTE FUNCTION app_notify_decision_facts();
CREATE TRIGGER decision_facts_notify_truncate AFTER TRUNCATE ON member_removals
  FOR EACH STATEMENT EXECUTE FUNCTION app_notify_decision_facts();
CREATE TRIGGER decision_facts_notify_truncate AFTER TRUNCATE ON tenant_roles
  FOR EACH STATEMENT EXECUTE FUNCTION app_notify_decision_facts();
CREATE TRIGGER decision_facts_notify_truncate AFTER TRUNCATE ON tenant_role_permissions
  FOR EACH STATEMENT EXECUTE FUNCTION app_notify_decision_facts();
CREATE TRIGGER decision_facts_notify_truncate AFTER TRUNCATE ON platform_roles
  FOR EACH STATEMENT EXECUTE FUNCTION app_notify_decision_facts();
CREATE TRIGGER decision_facts_notify_truncate AFTER TRUNCATE ON platform_role_permissions
  FOR EACH STATEMENT EXECUTE FUNCTION app_notify_decision_facts();
CREATE TRIGGER decision_facts_notify_truncate AFTER TRUNCATE ON permissions
  FOR EACH STATEMENT EXECUTE FUNCTION app_notify_decision_facts();
`);
}

export async function down(): Promise<void> {
  throw new Error('Migration 017 cannot be rolled back; restore a backup instead.');
}
