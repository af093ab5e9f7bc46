/**
 * A removal sticks (docs/security.md#a-removal-sticks):
 *
 * - `member_removals`: one row per (tenant, issuer, subject) removed by an admin or who left.
 *   Tenant-owned like every tenant table: `tenant_id` leads the primary key, row-level security
 *   is enabled and forced, the runtime role writes it inside the tenant's transaction. An
 *   accepted invitation or a platform admin's direct add deletes the row.
 * - `app_tenant_facts` (the arguments of migration 015) also returns `user_removal`, the caller's removal in
 *   this tenant, read after the membership (whose FOR KEY SHARE waits for a removal in flight),
 *   so a request racing the removal of its caller sees the committed mark.
 *
 * Tables and roles are spelled literally: released migrations never import later constants.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
CREATE TABLE member_removals (
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  issuer text NOT NULL,
  subject text NOT NULL,
  reason text NOT NULL CHECK (reason IN ('removed', 'left', 'deprovisioned')),
  removed_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, issuer, subject)
);
ALTER TABLE member_removals ENABLE ROW LEVEL SECURITY;
ALTER TABLE member_removals FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON member_removals
  USING (tenant_id = nullif(current_setting('app.tenant_id', true), '')::uuid)
  WITH CHECK (tenant_id = nullif(current_setting('app.tenant_id', true), '')::uuid);
GRANT SELECT, INSERT, UPDATE, DELETE ON member_removals TO tenant_service_app;
GRANT SELECT ON member_removals TO tenant_service_reader;

DROP FUNCTION app_tenant_facts(text, uuid, text, text, text, text, text[]);
CREATE FUNCTION app_tenant_facts(
  p_slug text, p_tenant_id uuid, p_link_issuer text, p_link_organization_id text, p_issuer text, p_subject text, p_roles text[]
) RETURNS TABLE (
  tenant_id uuid, tenant_name text, tenant_slug text, tenant_settings jsonb, tenant_status text,
  tenant_is_default boolean, tenant_created_at timestamptz, tenant_updated_at timestamptz,
  tenant_provision_from_claims boolean, tenant_claims_issuer text, tenant_roles_from_claims boolean, tenant_links jsonb,
  user_id uuid, user_email text, user_display_name text, user_role text, user_created_at timestamptz,
  role_permissions jsonb, user_removal text
) LANGUAGE plpgsql VOLATILE SECURITY INVOKER AS $$
DECLARE
  t tenants%ROWTYPE;
  u users%ROWTYPE;
  tid uuid;
  wanted text[];
BEGIN
  IF p_tenant_id IS NOT NULL THEN
    tid := p_tenant_id;
  ELSIF p_slug IS NOT NULL THEN
    SELECT id INTO tid FROM tenants WHERE slug = p_slug;
  ELSIF p_link_organization_id IS NOT NULL THEN
    SELECT l.tenant_id INTO tid FROM identity_links l
     WHERE l.issuer = p_link_issuer AND l.organization_id = p_link_organization_id;
  ELSE
    SELECT id INTO tid FROM tenants WHERE is_default; -- single-tenant mode
  END IF;
  IF tid IS NULL THEN
    RETURN;
  END IF;
  -- The tenant's entry lock, shared by every request in it and taken exclusively by its delete
  -- (app_lock_tenant_exclusive), so a stream of requests cannot starve the delete.
  PERFORM pg_advisory_xact_lock_shared(hashtextextended('tenant-entry:' || tid::text, 0));
  -- FOR KEY SHARE: the tenant and the membership cannot be deleted until the request ends.
  SELECT * INTO t FROM tenants WHERE id = tid FOR KEY SHARE;
  IF NOT FOUND THEN
    RETURN; -- deleted while this request waited
  END IF;
  PERFORM set_config('app.tenant_id', t.id::text, true);
  SELECT * INTO u FROM users
   WHERE users.tenant_id = t.id AND issuer = p_issuer AND subject = p_subject FOR KEY SHARE;
  -- The removal is read by the statement below (a new snapshot): when the membership read above
  -- waited for a removal to commit, its mark is visible there.
  -- The roles the decision may need: the stored one, member (the fallback), the token's.
  wanted := array_append(array_append(coalesce(p_roles, '{}'::text[]), 'member'), u.role);
  RETURN QUERY SELECT t.id, t.name::text, t.slug::text, t.settings, t.status, t.is_default, t.created_at, t.updated_at,
    t.provision_from_claims, t.claims_issuer, t.roles_from_claims,
    (SELECT coalesce(jsonb_agg(jsonb_build_object('issuer', l.issuer, 'organization_id', l.organization_id)
                               ORDER BY l.issuer, l.organization_id), '[]'::jsonb)
       FROM identity_links l WHERE l.tenant_id = t.id),
    u.id, u.email, u.display_name, u.role, u.created_at,
    (SELECT coalesce(jsonb_object_agg(r.key, r.perms), '{}'::jsonb) FROM (
       SELECT pr.key::text AS key,
              (SELECT coalesce(jsonb_agg(rp.permission_key ORDER BY rp.permission_key COLLATE "C"), '[]'::jsonb)
                 FROM platform_role_permissions rp WHERE rp.role_key = pr.key) AS perms
         FROM platform_roles pr WHERE pr.key = ANY (wanted)
       UNION ALL
       SELECT tr.key::text,
              (SELECT coalesce(jsonb_agg(tp.permission_key ORDER BY tp.permission_key COLLATE "C"), '[]'::jsonb)
                 FROM tenant_role_permissions tp WHERE tp.tenant_id = t.id AND tp.role_key = tr.key)
         FROM tenant_roles tr WHERE tr.tenant_id = t.id AND tr.key = ANY (wanted)) r),
    (SELECT mr.reason FROM member_removals mr
      WHERE mr.tenant_id = t.id AND mr.issuer = p_issuer AND mr.subject = p_subject);
END $$;
GRANT EXECUTE ON FUNCTION app_tenant_facts(text, uuid, text, text, text, text, text[]) TO tenant_service_app;
`);
}

export async function down(): Promise<void> {
  throw new Error('Migration 016 cannot be rolled back; restore a backup instead.');
}
