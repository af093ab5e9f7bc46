/**
 * Verified domains (docs/domains.md):
 *
 * - `tenant_domains`: the domains a tenant claimed (A-label, lower case), each with its
 *   verification token, status (`pending`, `verified`, `lapsed`), join policy and join role,
 *   and the daily re-check's bookkeeping (`next_check_at`, `misses`). Tenant-owned: row-level
 *   security confines writes to the tenant; a second SELECT policy lets every tenant see
 *   verified rows, because which tenant verified a domain is what resolution and joining look
 *   up before any tenant is entered (the DNS record proving it is public anyway).
 * - `tenant_domains_verified_unique`: one verified owner per domain; two tenants verifying at
 *   the same moment: the second commit fails on it.
 * - `app_tenant_facts` takes the caller's verified email's domain and its parents
 *   (`p_email_domains`, A-labels, longest first) and `p_by_domain` (the request named the
 *   tenant by its email domain: the tenant that verified the longest of them is chosen before
 *   the slug). It also returns `tenant_domain`, `tenant_domain_join` and
 *   `tenant_domain_join_role`: the tenant's longest verified domain covering the email, and
 *   its join policy; the join role's permissions are in `role_permissions`.
 *
 * A change of a verified row notifies every instance to forget all facts (`*`): it may change
 * which tenant an email domain resolves to. Other changes notify the tenant's.
 *
 * The new parameters have defaults, so the eight-argument form reads the same rows.
 * Tables and roles are spelled literally: released migrations never import later constants.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
CREATE TABLE tenant_domains (
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  domain text NOT NULL CHECK (char_length(domain) BETWEEN 1 AND 253 AND domain ~ '^[a-z0-9.-]+$'),
  token text NOT NULL CHECK (char_length(token) BETWEEN 43 AND 200),
  status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'verified', 'lapsed')),
  join_policy text NOT NULL DEFAULT 'none' CHECK (join_policy IN ('none', 'suggest', 'automatic')),
  join_role text NOT NULL DEFAULT 'member' CHECK (join_role ~ '^[a-z0-9-]+$' AND char_length(join_role) <= 64),
  verified_by text CHECK (verified_by IN ('dns', 'platform_admin')),
  created_at timestamptz NOT NULL DEFAULT now(),
  verified_at timestamptz,
  checked_at timestamptz,
  next_check_at timestamptz,
  misses integer NOT NULL DEFAULT 0,
  PRIMARY KEY (tenant_id, domain)
);
CREATE UNIQUE INDEX tenant_domains_verified_unique ON tenant_domains (domain) WHERE status = 'verified';
CREATE INDEX tenant_domains_next_check ON tenant_domains (next_check_at) WHERE status = 'verified';
ALTER TABLE tenant_domains ENABLE ROW LEVEL SECURITY;
ALTER TABLE tenant_domains FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON tenant_domains
  USING (tenant_id = nullif(current_setting('app.tenant_id', true), '')::uuid)
  WITH CHECK (tenant_id = nullif(current_setting('app.tenant_id', true), '')::uuid);
CREATE POLICY verified_owner ON tenant_domains FOR SELECT USING (status = 'verified');
GRANT SELECT, INSERT, UPDATE, DELETE ON tenant_domains TO tenant_service_app;
GRANT SELECT ON tenant_domains TO tenant_service_reader;
-- Migration 017's trigger function, with two optional arguments (a column and a value): a row
-- that gains or loses that value (a domain verified or no longer) notifies '*', because it may
-- change which tenant an email domain resolves to, whoever's facts were remembered for it.
CREATE OR REPLACE FUNCTION app_notify_decision_facts() RETURNS trigger LANGUAGE plpgsql SET search_path = pg_catalog, public AS $$
DECLARE
  tid text;
  col text := coalesce(TG_ARGV[0], 'tenant_id');
  wide_col text := TG_ARGV[1];
  wide_val text := TG_ARGV[2];
BEGIN
  IF TG_OP = 'TRUNCATE' THEN
    PERFORM pg_notify('tenant_service_decision_facts', '* ' || extract(epoch from now())::text);
    RETURN NULL;
  END IF;
  IF wide_col IS NOT NULL
     AND (TG_OP IN ('UPDATE', 'DELETE') AND to_jsonb(OLD) ->> wide_col = wide_val)
         IS DISTINCT FROM (TG_OP IN ('INSERT', 'UPDATE') AND to_jsonb(NEW) ->> wide_col = wide_val) THEN
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
CREATE TRIGGER decision_facts_notify AFTER INSERT OR UPDATE OR DELETE ON tenant_domains
  FOR EACH ROW EXECUTE FUNCTION app_notify_decision_facts('tenant_id', 'status', 'verified');
CREATE TRIGGER decision_facts_notify_truncate AFTER TRUNCATE ON tenant_domains
  FOR EACH STATEMENT EXECUTE FUNCTION app_notify_decision_facts();

DROP FUNCTION app_tenant_facts(text, uuid, text, text, text, text, text[], text);
CREATE FUNCTION app_tenant_facts(
  p_slug text, p_tenant_id uuid, p_link_issuer text, p_link_organization_id text, p_issuer text, p_subject text, p_roles text[],
  p_email_key text DEFAULT NULL, p_email_domains text[] DEFAULT NULL, p_by_domain boolean DEFAULT false
) RETURNS TABLE (
  tenant_id uuid, tenant_name text, tenant_slug text, tenant_settings jsonb, tenant_status text,
  tenant_is_default boolean, tenant_created_at timestamptz, tenant_updated_at timestamptz,
  tenant_provision_from_claims boolean, tenant_claims_issuer text, tenant_roles_from_claims boolean, tenant_links jsonb,
  user_id uuid, user_email text, user_display_name text, user_role text, user_created_at timestamptz,
  role_permissions jsonb, user_removal text,
  tenant_directory_managed boolean, tenant_external_id_claim text, user_directory_active boolean,
  user_directory_match uuid,
  tenant_domain text, tenant_domain_join text, tenant_domain_join_role text
) LANGUAGE plpgsql VOLATILE SECURITY INVOKER AS $$
DECLARE
  t tenants%ROWTYPE;
  u users%ROWTYPE;
  tid uuid;
  wanted text[];
  dm_domain text;
  dm_join text;
  dm_role text;
BEGIN
  IF p_by_domain AND p_email_domains IS NOT NULL THEN
    SELECT d.tenant_id INTO tid FROM tenant_domains d
     WHERE d.status = 'verified' AND d.domain = ANY (p_email_domains)
     ORDER BY char_length(d.domain) DESC LIMIT 1;
  END IF;
  IF tid IS NOT NULL THEN
    NULL;
  ELSIF p_tenant_id IS NOT NULL THEN
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
  IF p_email_domains IS NOT NULL THEN
    SELECT d.domain, d.join_policy, d.join_role INTO dm_domain, dm_join, dm_role FROM tenant_domains d
     WHERE d.tenant_id = t.id AND d.status = 'verified' AND d.domain = ANY (p_email_domains)
     ORDER BY char_length(d.domain) DESC LIMIT 1;
  END IF;
  wanted := array_append(array_append(array_append(coalesce(p_roles, '{}'::text[]), 'member'), u.role), dm_role);
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
    END,
    dm_domain, dm_join, dm_role;
END $$;
GRANT EXECUTE ON FUNCTION app_tenant_facts(text, uuid, text, text, text, text, text[], text, text[], boolean) TO tenant_service_app;
`);
}

export async function down(): Promise<void> {
  throw new Error('Migration 024 cannot be rolled back; restore a backup instead.');
}
