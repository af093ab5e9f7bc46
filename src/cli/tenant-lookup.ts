/** What the `tenant` commands share: a tenant named by slug or id, and a tenant as key/value lines. */
import * as sdk from '../../generated/sdk.gen';
import type { Tenant } from '../../generated/types.gen';
import { call, REQUEST_TIMEOUT_MS, type Connection } from './api';
import { CliError } from './errors';
import { SLUG } from './tenant-flags';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A tenant id as given, or the id of the tenant with exactly this slug (CliError when none). */
export async function resolveTenantId(conn: Connection, ref: string): Promise<string> {
  if (UUID.test(ref)) return ref;
  if (!SLUG.test(ref)) throw new CliError(`'${ref}' is neither a tenant id nor a slug (lowercase letters, digits and hyphens)`);
  const page = await call(
    conn,
    'tenant lookup',
    sdk.listTenants({ client: conn.client, query: { q: ref, limit: 1000 }, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) }),
  );
  const match = page.tenants.find((t) => t.slug === ref);
  if (!match) throw new CliError(`no tenant with slug '${ref}'`, 1);
  return match.tenant_id;
}

/** A tenant as key/value lines (`tenant get`, `tenant update`). */
export function tenantPairs(t: Tenant): Array<[string, string]> {
  return [
    ['tenant_id', t.tenant_id],
    ['name', t.name],
    ['slug', t.slug],
    ['status', t.status],
    ['settings', JSON.stringify(t.settings)],
    ['provision_from_claims', String(t.membership_policy.provision_from_claims)],
    ['claims_issuer', t.membership_policy.claims_issuer ?? '(any issuer)'],
    ['roles_from_claims', String(t.membership_policy.roles_from_claims ?? false)],
    ['identity_links', (t.identity_links ?? []).map((l) => `${l.issuer} ${l.organization_id}`).join(', ') || '(none)'],
    ['created_at', t.created_at],
    ['updated_at', t.updated_at],
  ];
}
