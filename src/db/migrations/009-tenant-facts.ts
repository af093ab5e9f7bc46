/**
 * Who may join a tenant is decided in TypeScript (src/tenancy/decide.ts), no longer in SQL:
 *
 * - `tenants.roles_from_claims`: the member's role follows the identity provider's token.
 *
 * - `identity_links`: (issuer, organization id) pairs naming a tenant
 * (docs/identity-providers.md#organization-ids). A   platform table like `tenants`, without
 * row-level security: a request looks a link up   before it knows its tenant, and only platform
 * admins write links. A pair belongs to at most   one tenant (`identity_links_pair_unique`, mapped
 * to 409).
 * - `app_tenant_facts` replaces `app_enter_tenant`: it finds the tenant (by id, slug, identity
 *   link or the default), takes the tenant's entry lock, sets app.tenant_id and returns the
 *   tenant, its links and the caller's membership. It decides nothing and writes no row; a
 *   first-use membership is a separate INSERT (src/db/queries/enter-tenant.ts).
 *
 * Tables and roles are spelled literally: released migrations never import later constants.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
ALTER TABLE tenants ADD COLUMN roles_from_claims boolean NOT NULL DEFAULT false;

CREATE TABLE identity_links (
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  issuer text NOT NULL CHECK (char_length(issuer) BETWEEN 1 AND 2048),
  organization_id text NOT NULL CHECK (char_length(organization_id) BETWEEN 1 AND 255),
  created_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT identity_links_pair_unique UNIQUE (issuer, organization_id)
);
CREATE INDEX identity_links_tenant ON identity_links (tenant_id);
GRANT SELECT, INSERT, DELETE ON identity_links TO tenant_service_app;
GRANT SELECT ON identity_links TO tenant_service_reader;

DROP FUNCTION app_enter_tenant(text, uuid, text, text, boolean, text, text);
CREATE FUNCTION app_tenant_facts(
  p_slug text, p_tenant_id uuid, p_link_issuer text, p_link_organization_id text, p_issuer text, p_subject text
) RETURNS TABLE (
  tenant_id uuid, tenant_name text, tenant_slug text, tenant_settings jsonb, tenant_status text,
  tenant_is_default boolean, tenant_created_at timestamptz, tenant_updated_at timestamptz,
  tenant_provision_from_claims boolean, tenant_claims_issuer text, tenant_roles_from_claims boolean, tenant_links jsonb,
  user_id uuid, user_email text, user_display_name text, user_role text, user_created_at timestamptz
) LANGUAGE plpgsql VOLATILE SECURITY INVOKER AS $$
DECLARE
  t tenants%ROWTYPE;
  u users%ROWTYPE;
  tid uuid;
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
  RETURN QUERY SELECT t.id, t.name::text, t.slug::text, t.settings, t.status, t.is_default, t.created_at, t.updated_at,
    t.provision_from_claims, t.claims_issuer, t.roles_from_claims,
    (SELECT coalesce(jsonb_agg(jsonb_build_object('issuer', l.issuer, 'organization_id', l.organization_id)
                               ORDER BY l.issuer, l.organization_id), '[]'::jsonb)
       FROM identity_links l WHERE l.tenant_id = t.id),
    u.id, u.email, u.display_name, u.role, u.created_at;
END $$;
GRANT EXECUTE ON FUNCTION app_tenant_facts(text, uuid, text, text, text, text) TO tenant_service_app;
`);
}

export async function down(): Promise<void> {
  throw new Error('Migration 009 cannot be rolled back; restore a backup instead.');
}
