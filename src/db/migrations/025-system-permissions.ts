/**
 * System permissions (docs/roles.md#system-permissions): the service's own `tenant:` permissions,
 * one per kind of work in a tenant, each guarding the tenant operations whose `x-permission`
 * names it.
 *
 * - `permissions.system`: true for them. They are inserted here (a product permission that
 *   happened to have one of these keys becomes the system one), cannot be deleted (a trigger
 *   refuses; the domain answers 400 first), and no other key may start with `tenant:` (a check,
 *   NOT VALID so an older product key in that namespace does not stop the upgrade).
 * - The built-in `admin` holds every system permission, always: granted here, granted by a
 *   trigger to any system permission a later migration adds, and a deferred constraint trigger
 *   refuses a commit that leaves `admin` without one.
 * - The built-in `member` is given `tenant:members:read`, so members keep seeing who else is a
 *   member (a platform admin may take it away).
 *
 * Every table touched already notifies the decision memory (017). Tables, roles and keys are
 * spelled literally: released migrations never import later constants.
 */
import type { Knex } from 'knex';

const SYSTEM: ReadonlyArray<readonly [string, string]> = [
  ['tenant:members:read', 'List the members of the tenant and the roles available in it.'],
  ['tenant:members:write', "Change a member's role; remove a member."],
  ['tenant:invitations:write', 'List, send, resend and revoke invitations.'],
  ['tenant:roles:write', "Create, edit and delete the tenant's own roles."],
  ['tenant:directory:manage', "The tenant's directory sync: SCIM tokens and settings."],
  ['tenant:domains:manage', "The tenant's verified domains."],
  ['tenant:sso:manage', "The tenant's SSO connections."],
  ['tenant:settings:write', "The tenant's settings."],
  ['tenant:webhooks:manage', "The tenant's webhooks."],
  ['tenant:events:read', "Read the tenant's audit log (events)."],
];

export async function up(knex: Knex): Promise<void> {
  const quote = (v: string) => `'${v.replace(/'/g, "''")}'`;
  const values = SYSTEM.map(([key, description]) => `(${quote(key)}, ${quote(description)}, true)`).join(',\n  ');
  await knex.raw(`
ALTER TABLE permissions ADD COLUMN system boolean NOT NULL DEFAULT false;
INSERT INTO permissions (key, description, system) VALUES ${values}
  ON CONFLICT (key) DO UPDATE SET system = true, description = EXCLUDED.description;
ALTER TABLE permissions ADD CONSTRAINT permissions_tenant_namespace CHECK (system OR key NOT LIKE 'tenant:%') NOT VALID;
INSERT INTO platform_role_permissions (role_key, permission_key)
  SELECT 'admin', key FROM permissions WHERE system ON CONFLICT DO NOTHING;
INSERT INTO platform_role_permissions (role_key, permission_key)
  VALUES ('member', 'tenant:members:read') ON CONFLICT DO NOTHING;
`);
  await knex.raw(`
CREATE FUNCTION app_system_permission_kept() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF OLD.system THEN
    RAISE EXCEPTION 'system permission % cannot be deleted', OLD.key USING ERRCODE = 'check_violation';
  END IF;
  RETURN OLD;
END $$;
CREATE TRIGGER system_permission_kept BEFORE DELETE ON permissions
  FOR EACH ROW EXECUTE FUNCTION app_system_permission_kept();

CREATE FUNCTION app_system_permission_to_admin() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO platform_role_permissions (role_key, permission_key)
    SELECT 'admin', NEW.key WHERE EXISTS (SELECT 1 FROM platform_roles WHERE key = 'admin')
    ON CONFLICT DO NOTHING;
  RETURN NULL;
END $$;
CREATE TRIGGER system_permission_to_admin AFTER INSERT OR UPDATE OF system ON permissions
  FOR EACH ROW WHEN (NEW.system) EXECUTE FUNCTION app_system_permission_to_admin();

CREATE FUNCTION app_admin_holds_system_permissions() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  missing text;
BEGIN
  SELECT p.key INTO missing FROM permissions p
   WHERE p.system AND EXISTS (SELECT 1 FROM platform_roles WHERE key = 'admin')
     AND NOT EXISTS (SELECT 1 FROM platform_role_permissions rp WHERE rp.role_key = 'admin' AND rp.permission_key = p.key)
   LIMIT 1;
  IF missing IS NOT NULL THEN
    RAISE EXCEPTION 'the built-in role admin must hold the system permission %', missing USING ERRCODE = 'check_violation';
  END IF;
  RETURN NULL;
END $$;
CREATE CONSTRAINT TRIGGER admin_holds_system_permissions AFTER DELETE ON platform_role_permissions
  DEFERRABLE INITIALLY DEFERRED
  FOR EACH ROW WHEN (OLD.role_key = 'admin') EXECUTE FUNCTION app_admin_holds_system_permissions();
`);
}

export async function down(): Promise<void> {
  throw new Error('Migration 025 cannot be rolled back; restore a backup instead.');
}
