/**
 * The tenant token of the entered member (docs/tenant-tokens.md), as both GET /api/tenant/token
 * and the gateway decision hand it out: members only, minted, counted. Not an operation (the
 * table in ./index.ts spreads only the tag modules).
 */
import { mintTenantToken, type IssuedTenantToken } from '../auth/tenant-tokens';
import type { EnteredTenant } from '../context/request';
import { ApiError } from '../errors';

/** Mints the caller's tenant token for the entered tenant; 403 when the caller is not a member. */
export async function issueMemberToken(ctx: EnteredTenant): Promise<IssuedTenantToken> {
  if (!ctx.membership) {
    throw new ApiError('accessDenied', `Tenant tokens are issued to members only; you are not a member of tenant '${ctx.tenant.slug}'.`);
  }
  const token = await mintTenantToken(ctx.services.tenantTokenKeys, ctx.config, { caller: ctx.caller, tenant: ctx.tenant, membership: ctx.membership });
  ctx.services.metrics?.tenantTokenIssued?.();
  return token;
}
