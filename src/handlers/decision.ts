/**
 * The gateway decision (docs/gateways.md): the request's tenant entered exactly as for
 * `GET /api/tenant` (one statement, same resolution, membership and provisioning), answered as
 * headers a gateway copies onto the product's request. Refusals become 401/403 in
 * src/http/decision.ts.
 */
import type { DecideTenantAccessData, DecideTenantAccessResponses } from '../../generated/types.gen';
import { decideProductAccess } from '../tenancy/decide';
import { issueMemberToken } from '../domain/tenant-tokens';
import { tenantRead, type HandlerInput, type Reply } from './types';

/** Printable ASCII other than `%`: sent as is (decodeURIComponent leaves it unchanged). */
const PLAIN_HEADER_VALUE = /^[\x20-\x24\x26-\x7e]*$/;

/** The subject as a header value: percent-encoded (UTF-8) unless it is plain ASCII (docs/gateways.md#what-it-answers). */
function subjectHeaderValue(subject: string): string {
  return PLAIN_HEADER_VALUE.test(subject) ? subject : encodeURIComponent(subject);
}

export const decideTenantAccess = tenantRead(async (ctx, input: HandlerInput<DecideTenantAccessData>): Promise<Reply<DecideTenantAccessResponses>> => {
  const m = ctx.membership;
  const refusal = decideProductAccess(ctx.tenant.slug, m, { role: input.query.role, permissions: input.query.permission });
  if (refusal || !m) throw refusal;
  // Signing costs an ES256 signature per product request: only when the deployment asks for it.
  const token = ctx.config.decisionTenantToken ? await issueMemberToken(ctx) : null;
  return {
    status: 200,
    headers: {
      ...(token ? { 'X-Tenant-Token': token.accessToken } : {}),
      'X-Tenant-Id': ctx.tenant.id,
      'X-Tenant-Slug': ctx.tenant.slug,
      'X-Tenant-Role': m.role,
      'X-Tenant-Permissions': m.permissions.join(' '),
      'X-User-Id': m.userId,
      'X-User-Subject': subjectHeaderValue(ctx.caller.subject),
      // The subject is unique per issuer only: a product that stores users keys them by both.
      'X-User-Issuer': subjectHeaderValue(ctx.caller.issuer),
      // Every product request asks again: a removed member is refused on the next one.
      'Cache-Control': 'no-store',
    },
    body: { tenant_id: ctx.tenant.id, tenant_slug: ctx.tenant.slug, tenant_role: m.role, permissions: [...m.permissions], user_id: m.userId, user_subject: ctx.caller.subject },
  };
});
