/**
 * Members who joined before the directory was connected (docs/directory-sync.md#members-who-were-there-first):
 * `app_tenant_facts` takes the caller's verified email key (`p_email_key`, trimmed, NFKC,
 * case-folded; null when the token has no verified email) and also returns
 * `user_directory_match`: for a member of a directory-managed tenant whose membership no
 * directory user is bound to, the oldest unbound directory user (active or not) whose userName
 * or emails equal that key. The request binds the member to it, then decides on the directory's
 * word (a deactivated user is refused).
 *
 * `p_email_key` has a default, so a caller of the seven-argument form (the bench's hand-written
 * reference) reads the same rows with one more column, null.
 * Tables and roles are spelled literally: released migrations never import later constants.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
DROP FUNCTION app_tenant_facts(text, uuid, text, text, text, text, text[]);
CREATE FUNCTION app_tenant_facts(
  p_slug text, p_tenant_id uuid, p_link_issuer text, p_link_organization_id text, p_issuer text, p_subject text, p_roles text[],
  p_email_key text DEFAULT NULL
) RETURNS TABLE (
  tenant_id uuid, tenant_name text, tenant_slug text, tenant_settings jsonb, tenant_status text,
  tenant_is_default boolean, tenant_created_at timestamptz, tenant_updated_at timestamptz,
  tenant_provision_from_claims boolean, tenant_claims_issuer text, tenant_roles_from_claims boolean, tenant_links jsonb,
  user_id uuid, user_email text, user_display_name text, user_role text, user_created_at timestamptz,
  role_permissions jsonb, user_removal text,
  tenant_directory_managed boolean, tenant_external_id_claim text, user_directory_active boolean,
  user_directory_match uuid
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
  PERFORM pg_advisory_xact_lock_shared(hashtextextended('tenant-entry:' || tid::text, 0));
  SELECT * INTO t FROM tenants WHERE id = tid FOR KEY SHARE;
  IF NOT FOUND THEN
    RETURN;
  END IF;
  PERFORM set_config('app.tenant_id', t.id::text, true);
  SELECT * INTO u FROM users
   WHERE users.tenant_id = t.id AND issuer = p_issuer AND subject = p_subject FOR KEY SHARE;
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
      WHERE mr.tenant_id = t.id AND mr.issuer = p_issuer AND mr.subject = p_subject),
    EXISTS (SELECT 1 FROM scim_tokens st WHERE st.tenant_id = t.id),
    (SELECT ds.external_id_claim FROM directory_settings ds WHERE ds.tenant_id = t.id),
    (SELECT du.active FROM directory_users du WHERE du.tenant_id = t.id AND du.user_id = u.id),
    CASE WHEN u.id IS NOT NULL AND p_email_key IS NOT NULL
              AND EXISTS (SELECT 1 FROM scim_tokens st WHERE st.tenant_id = t.id)
              AND NOT EXISTS (SELECT 1 FROM directory_users du WHERE du.tenant_id = t.id AND du.user_id = u.id)
         THEN (SELECT du.id FROM directory_users du
                WHERE du.tenant_id = t.id AND du.user_id IS NULL
                  AND (du.user_name_key = p_email_key OR du.email_keys @> ARRAY[p_email_key])
                ORDER BY du.created_at, du.id LIMIT 1)
    END;
END $$;
GRANT EXECUTE ON FUNCTION app_tenant_facts(text, uuid, text, text, text, text, text[], text) TO tenant_service_app;
`);
}

export async function down(): Promise<void> {
  throw new Error('Migration 019 cannot be rolled back; restore a backup instead.');
}
