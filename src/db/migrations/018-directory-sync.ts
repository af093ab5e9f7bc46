/**
 * Directory sync by SCIM 2.0 (docs/directory-sync.md):
 *
 * - `scim_tokens`: a tenant's SCIM bearer tokens, stored as sha256 only (shown once). A tenant
 *   with a token is directory-managed: it never provisions from claims or linked ids.
 * - `directory_settings`: one row per tenant that set `group_roles` / `external_id_claim`.
 * - `directory_users`: the directory's users of a tenant. `user_id` is the membership (users row)
 *   it is bound to at its person's first sign-in; `role` is what its groups give it (also
 *   written to the bound users row); `active` false refuses the bound member.
 * - `directory_groups`, `directory_group_members`: the directory's groups and who is in them.
 * - `events.actor_scim_token_id`: the SCIM token a directory change came through.
 * - `app_tenant_facts` also returns whether the tenant is directory-managed, its
 *   external_id_claim, and whether the caller's membership was deactivated by the directory.
 *
 * Every table is tenant-owned: `tenant_id` leads the primary key, composite foreign keys, row-level
 * security enabled and forced. The tables the facts read carry migration 017's notify trigger.
 * Tables and roles are spelled literally: released migrations never import later constants.
 */
import type { Knex } from 'knex';

const RLS = (table: string) => `
ALTER TABLE ${table} ENABLE ROW LEVEL SECURITY;
ALTER TABLE ${table} FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON ${table}
  USING (tenant_id = nullif(current_setting('app.tenant_id', true), '')::uuid)
  WITH CHECK (tenant_id = nullif(current_setting('app.tenant_id', true), '')::uuid);
GRANT SELECT, INSERT, UPDATE, DELETE ON ${table} TO tenant_service_app;
GRANT SELECT ON ${table} TO tenant_service_reader;
`;

const NOTIFY = (table: string) => `
CREATE TRIGGER decision_facts_notify AFTER INSERT OR UPDATE OR DELETE ON ${table}
  FOR EACH ROW EXECUTE FUNCTION app_notify_decision_facts('tenant_id');
CREATE TRIGGER decision_facts_notify_truncate AFTER TRUNCATE ON ${table}
  FOR EACH STATEMENT EXECUTE FUNCTION app_notify_decision_facts();
`;

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
CREATE TABLE scim_tokens (
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  id uuid NOT NULL DEFAULT gen_random_uuid(),
  token_hash text NOT NULL,
  description text CHECK (char_length(description) <= 200),
  created_at timestamptz NOT NULL DEFAULT now(),
  last_used_at timestamptz,
  PRIMARY KEY (tenant_id, id),
  CONSTRAINT scim_tokens_token_hash_unique UNIQUE (token_hash)
);
${RLS('scim_tokens')}
${NOTIFY('scim_tokens')}

CREATE TABLE directory_settings (
  tenant_id uuid NOT NULL PRIMARY KEY REFERENCES tenants (id) ON DELETE CASCADE,
  group_roles jsonb NOT NULL DEFAULT '[]'::jsonb CHECK (jsonb_typeof(group_roles) = 'array'),
  external_id_claim text CHECK (char_length(external_id_claim) BETWEEN 1 AND 100),
  updated_at timestamptz NOT NULL DEFAULT now()
);
${RLS('directory_settings')}
${NOTIFY('directory_settings')}

CREATE TABLE directory_users (
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  id uuid NOT NULL DEFAULT gen_random_uuid(),
  user_name text NOT NULL CHECK (char_length(user_name) BETWEEN 1 AND 300),
  user_name_key text NOT NULL,
  external_id text CHECK (char_length(external_id) <= 300),
  display_name text CHECK (char_length(display_name) <= 300),
  name jsonb NOT NULL DEFAULT '{}'::jsonb,
  emails jsonb NOT NULL DEFAULT '[]'::jsonb,
  email_keys text[] NOT NULL DEFAULT '{}',
  active boolean NOT NULL DEFAULT true,
  role text NOT NULL DEFAULT 'member' CHECK (role ~ '^[a-z0-9-]+$' AND char_length(role) <= 64),
  user_id uuid,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, id),
  CONSTRAINT directory_users_user_name_unique UNIQUE (tenant_id, user_name_key),
  CONSTRAINT directory_users_member_unique UNIQUE (tenant_id, user_id),
  FOREIGN KEY (tenant_id, user_id) REFERENCES users (tenant_id, id) ON DELETE SET NULL (user_id)
);
CREATE INDEX directory_users_external_id ON directory_users (tenant_id, external_id);
CREATE INDEX directory_users_email_keys ON directory_users USING gin (email_keys);
CREATE INDEX directory_users_created_order ON directory_users (tenant_id, created_at, id);
${RLS('directory_users')}
${NOTIFY('directory_users')}

CREATE TABLE directory_groups (
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  id uuid NOT NULL DEFAULT gen_random_uuid(),
  display_name text NOT NULL CHECK (char_length(display_name) BETWEEN 1 AND 300),
  external_id text CHECK (char_length(external_id) <= 300),
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, id),
  CONSTRAINT directory_groups_display_name_unique UNIQUE (tenant_id, display_name)
);
CREATE INDEX directory_groups_created_order ON directory_groups (tenant_id, created_at, id);
${RLS('directory_groups')}

CREATE TABLE directory_group_members (
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  group_id uuid NOT NULL,
  member_id uuid NOT NULL,
  PRIMARY KEY (tenant_id, group_id, member_id),
  FOREIGN KEY (tenant_id, group_id) REFERENCES directory_groups (tenant_id, id) ON DELETE CASCADE,
  FOREIGN KEY (tenant_id, member_id) REFERENCES directory_users (tenant_id, id) ON DELETE CASCADE
);
CREATE INDEX directory_group_members_member ON directory_group_members (tenant_id, member_id);
${RLS('directory_group_members')}

ALTER TABLE events ADD COLUMN actor_scim_token_id uuid;

DROP FUNCTION app_tenant_facts(text, uuid, text, text, text, text, text[]);
CREATE FUNCTION app_tenant_facts(
  p_slug text, p_tenant_id uuid, p_link_issuer text, p_link_organization_id text, p_issuer text, p_subject text, p_roles text[]
) RETURNS TABLE (
  tenant_id uuid, tenant_name text, tenant_slug text, tenant_settings jsonb, tenant_status text,
  tenant_is_default boolean, tenant_created_at timestamptz, tenant_updated_at timestamptz,
  tenant_provision_from_claims boolean, tenant_claims_issuer text, tenant_roles_from_claims boolean, tenant_links jsonb,
  user_id uuid, user_email text, user_display_name text, user_role text, user_created_at timestamptz,
  role_permissions jsonb, user_removal text,
  tenant_directory_managed boolean, tenant_external_id_claim text, user_directory_active boolean
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
    (SELECT du.active FROM directory_users du WHERE du.tenant_id = t.id AND du.user_id = u.id);
END $$;
GRANT EXECUTE ON FUNCTION app_tenant_facts(text, uuid, text, text, text, text, text[]) TO tenant_service_app;
`);
}

export async function down(): Promise<void> {
  throw new Error('Migration 018 cannot be rolled back; restore a backup instead.');
}
