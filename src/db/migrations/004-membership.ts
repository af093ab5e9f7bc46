/**
 * Who may join a tenant (docs/tenants.md#membership):
 *
 * - `tenants.provision_from_claims` / `tenants.claims_issuer`: the tenant's membership policy.
 *   Existing tenants keep claim provisioning, except the self-registered ones (their members
 *   join by invitation).
 * - `retired_slugs`: the slug of every deleted (or renamed) tenant, written by a trigger so no
 *   code path can forget it; self-service registration refuses them for a while.
 * - `invitations`: tenant-owned, row-level security like 001; tokens stored as sha256 only.
 * - `app_enter_tenant` (same arguments) honours the policy and locks the tenant row and the
 *   caller's users row FOR KEY SHARE for the request's transaction, so deleting the tenant or
 *   removing the member waits for in-flight requests instead of breaking their foreign keys.
 *
 * Tables and roles are spelled literally: released migrations never import later constants.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
ALTER TABLE tenants
  ADD COLUMN provision_from_claims boolean NOT NULL DEFAULT true,
  ADD COLUMN claims_issuer text CHECK (claims_issuer IS NULL OR char_length(claims_issuer) BETWEEN 1 AND 2048);
UPDATE tenants SET provision_from_claims = false WHERE created_by_subject IS NOT NULL;

CREATE TABLE retired_slugs (
  slug varchar(255) NOT NULL,
  tenant_id uuid NOT NULL,
  retired_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (slug, tenant_id, retired_at)
);
CREATE INDEX retired_slugs_recent ON retired_slugs (slug, retired_at DESC);

-- One advisory lock per slug, shared with registration: a registration checking a slug and the
-- deletion retiring it run one after the other, never interleaved.
CREATE FUNCTION app_retire_tenant_slug() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, public AS $$
BEGIN
  IF TG_OP = 'UPDATE' AND NEW.slug IS NOT DISTINCT FROM OLD.slug THEN
    RETURN NEW;
  END IF;
  PERFORM pg_advisory_xact_lock(hashtextextended('tenant-slug:' || OLD.slug, 0));
  INSERT INTO retired_slugs (slug, tenant_id) VALUES (OLD.slug, OLD.id) ON CONFLICT DO NOTHING;
  IF TG_OP = 'DELETE' THEN
    RETURN OLD;
  END IF;
  RETURN NEW;
END $$;
CREATE TRIGGER tenants_retire_slug BEFORE DELETE OR UPDATE OF slug ON tenants
  FOR EACH ROW EXECUTE FUNCTION app_retire_tenant_slug();

CREATE TABLE invitations (
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  id uuid NOT NULL DEFAULT gen_random_uuid(),
  email varchar(320) NOT NULL,
  role text NOT NULL DEFAULT 'member' CHECK (role IN ('admin', 'member')),
  token_hash text NOT NULL,
  status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'accepted', 'revoked', 'expired')),
  expires_at timestamptz NOT NULL,
  invited_by uuid,
  invited_by_email text,
  accepted_by uuid,
  accepted_at timestamptz,
  revoked_at timestamptz,
  delivery text NOT NULL DEFAULT 'not_configured' CHECK (delivery IN ('sent', 'failed', 'not_configured')),
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, id),
  FOREIGN KEY (tenant_id, invited_by) REFERENCES users (tenant_id, id) ON DELETE SET NULL (invited_by),
  FOREIGN KEY (tenant_id, accepted_by) REFERENCES users (tenant_id, id) ON DELETE SET NULL (accepted_by),
  CONSTRAINT invitations_token_hash_unique UNIQUE (token_hash)
);
CREATE UNIQUE INDEX invitations_one_pending_per_email ON invitations (tenant_id, lower(email)) WHERE status = 'pending';
CREATE INDEX invitations_created_order ON invitations (tenant_id, created_at DESC, id DESC);
CREATE INDEX invitations_invited_by ON invitations (tenant_id, invited_by);
CREATE INDEX invitations_accepted_by ON invitations (tenant_id, accepted_by);

ALTER TABLE invitations ENABLE ROW LEVEL SECURITY;
ALTER TABLE invitations FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON invitations
  USING (tenant_id = nullif(current_setting('app.tenant_id', true), '')::uuid)
  WITH CHECK (tenant_id = nullif(current_setting('app.tenant_id', true), '')::uuid);

GRANT SELECT, INSERT, UPDATE, DELETE ON invitations TO tenant_service_app;
GRANT SELECT ON invitations TO tenant_service_reader;
GRANT SELECT ON retired_slugs TO tenant_service_app, tenant_service_reader;
`);

  await knex.raw(`
DROP FUNCTION app_enter_tenant(text, uuid, text, text, boolean, text, text);
CREATE FUNCTION app_enter_tenant(
  p_slug text, p_tenant_id uuid, p_issuer text, p_subject text,
  p_provision boolean, p_email text, p_display_name text
) RETURNS TABLE (
  tenant_id uuid, tenant_name text, tenant_slug text, tenant_settings jsonb, tenant_status text,
  tenant_is_default boolean, tenant_created_at timestamptz, tenant_updated_at timestamptz,
  user_id uuid, user_email text, user_display_name text, user_role text, user_created_at timestamptz,
  provisioned boolean, tenant_provision_from_claims boolean, tenant_claims_issuer text
) LANGUAGE plpgsql VOLATILE SECURITY INVOKER AS $$
DECLARE
  t tenants%ROWTYPE;
  u users%ROWTYPE;
  tid uuid;
  made boolean := false;
  inserted integer := 0;
  may_provision boolean;
BEGIN
  -- FOR KEY SHARE: the tenant (and below, the membership) cannot be deleted until this
  -- request's transaction ends; a delete that got there first makes these lookups find nothing.
  IF p_tenant_id IS NOT NULL THEN
    tid := p_tenant_id;
  ELSIF p_slug IS NOT NULL THEN
    SELECT id INTO tid FROM tenants WHERE slug = p_slug;
  ELSE
    SELECT id INTO tid FROM tenants WHERE is_default; -- single-tenant mode
  END IF;
  IF tid IS NULL THEN
    RETURN;
  END IF;
  -- The tenant's entry lock, shared by every request in it and taken exclusively by its delete
  -- (app_lock_tenant_exclusive). Row locks alone let a steady stream of requests starve the
  -- delete (each FOR KEY SHARE is granted while the delete waits); the lock manager queues a new
  -- shared request behind a waiting exclusive one, so the delete waits only for requests in flight.
  PERFORM pg_advisory_xact_lock_shared(hashtextextended('tenant-entry:' || tid::text, 0));
  SELECT * INTO t FROM tenants WHERE id = tid FOR KEY SHARE;
  IF NOT FOUND THEN
    RETURN; -- deleted while this request waited
  END IF;
  PERFORM set_config('app.tenant_id', t.id::text, true);
  SELECT * INTO u FROM users
   WHERE users.tenant_id = t.id AND issuer = p_issuer AND subject = p_subject FOR KEY SHARE;
  -- Single-tenant mode (no slug, no id): every caller belongs to the default tenant.
  -- Otherwise the tenant decides: claims provision only where it allows, from its issuer.
  may_provision := p_provision AND t.status = 'active' AND (
    (p_slug IS NULL AND p_tenant_id IS NULL)
    OR (t.provision_from_claims AND (t.claims_issuer IS NULL OR t.claims_issuer = p_issuer)));
  IF NOT FOUND AND may_provision THEN
    INSERT INTO users (tenant_id, issuer, subject, email, display_name, role)
    VALUES (t.id, p_issuer, p_subject, p_email, p_display_name, 'member')
    ON CONFLICT ON CONSTRAINT users_tenant_identity_unique DO NOTHING;
    -- Only the request whose INSERT made the row reports it as provisioned: a concurrent first
    -- request that lost the race finds the row below but must not record a second event.
    GET DIAGNOSTICS inserted = ROW_COUNT;
    made := inserted > 0;
    SELECT * INTO u FROM users
     WHERE users.tenant_id = t.id AND issuer = p_issuer AND subject = p_subject FOR KEY SHARE;
  END IF;
  RETURN QUERY SELECT t.id, t.name::text, t.slug::text, t.settings, t.status, t.is_default, t.created_at, t.updated_at,
    u.id, u.email, u.display_name, u.role, u.created_at, made, t.provision_from_claims, t.claims_issuer;
END $$;
GRANT EXECUTE ON FUNCTION app_enter_tenant(text, uuid, text, text, boolean, text, text) TO tenant_service_app;

-- Taken by a tenant's delete, in each of its transactions: waits for the requests in the tenant
-- and holds new ones back until the transaction ends (they then find the tenant gone).
CREATE OR REPLACE FUNCTION app_lock_tenant_exclusive(p_tenant_id uuid) RETURNS void
LANGUAGE sql VOLATILE SECURITY INVOKER AS $fn$
  SELECT pg_advisory_xact_lock(hashtextextended('tenant-entry:' || p_tenant_id::text, 0));
$fn$;
GRANT EXECUTE ON FUNCTION app_lock_tenant_exclusive(uuid) TO tenant_service_app;
`);
}

export async function down(): Promise<void> {
  throw new Error('Migration 004 cannot be rolled back; restore a backup instead.');
}
