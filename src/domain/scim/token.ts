/**
 * A SCIM request's token (docs/directory-sync.md#connecting-a-directory): found by its SHA-256
 * across tenants (the platform reader), then used inside its tenant's transaction, where a revoke
 * committed meanwhile or a tenant that may not be entered refuses it.
 */
import { findScimTokenByHash, useScimToken } from '../../db/queries/scim-tokens';
import { withPlatformRead, type Database, type Transaction } from '../../db/tenant-scope';
import { statusRefusal } from '../../context/tenant-entry';
import { ApiError } from '../../errors';
import { SCIM_TOKEN_PREFIX, scimTokenHash } from '../directory-settings';

export async function findScimToken(db: Database, token: string): Promise<{ tenantId: string; tokenId: string } | null> {
  if (!token.startsWith(SCIM_TOKEN_PREFIX)) return null;
  const row = await withPlatformRead(db, (trx) => findScimTokenByHash(trx, scimTokenHash(token)));
  return row && { tenantId: row.tenant_id, tokenId: row.id };
}

/** In the tenant's transaction: the token still exists and the tenant may be entered, else the refusal. */
export async function enterScimTenant(trx: Transaction, tenantId: string, tokenId: string): Promise<{ slug: string }> {
  const t = await useScimToken(trx, tenantId, tokenId);
  if (!t) throw new ApiError('unauthorized', 'The SCIM token is not valid (unknown or revoked).');
  // A directory has no business with a tenant that may not be entered: the entry decision's
  // refusal, read from the lifecycle table (docs/operations.md#tenant-lifecycle).
  const closed = statusRefusal(t.slug, t.status);
  if (closed) throw closed;
  return { slug: t.slug };
}
