/**
 * How a SCIM operation's handler runs: inside the transaction of the tenant its token names
 * (row-level security confines it there), after checking in that transaction that the token
 * still exists and the tenant is active (docs/directory-sync.md).
 */
import type { Logger } from 'pino';
import type { Config } from '../config';
import type { AppServices } from '../context/app-services';
import type { Caller } from '../context/claims';
import type { RequestContext, ScimContext } from '../context/request';
import { directoryOrigin, type EventOrigin } from '../context/origin';
import { withTenant, type Transaction } from '../db/tenant-scope';
import { scimBaseUrl } from '../domain/directory-settings';
import { enterScimTenant } from '../domain/scim/token';
import { ApiError } from '../errors';

class InScimTenant implements ScimContext {
  readonly requestId: string;
  readonly ip: string | null;
  readonly config: Config;
  readonly services: AppServices;
  readonly caller: Caller | null = null;
  readonly base: string;
  readonly origin: EventOrigin;
  private child: Logger | null = null;

  constructor(
    ctx: RequestContext,
    readonly tenantId: string,
    readonly tenantSlug: string,
    readonly tokenId: string,
    readonly trx: Transaction,
  ) {
    this.requestId = ctx.requestId;
    this.ip = ctx.ip;
    this.config = ctx.config;
    this.services = ctx.services;
    this.base = scimBaseUrl(ctx.config);
    this.origin = directoryOrigin(tokenId, this.requestId, this.ip);
  }

  get log(): Logger {
    this.child ??= this.services.logger.child({ request_id: this.requestId, tenant_id: this.tenantId, scim_token_id: this.tokenId });
    return this.child;
  }
}

export async function runScim<T>(ctx: RequestContext, scim: { tenantId: string; tokenId: string; forget?: () => void } | null, run: (sctx: ScimContext) => Promise<T>): Promise<T> {
  if (!scim) throw new ApiError('unauthorized', 'A valid SCIM token is required.');
  return withTenant(ctx.services.db, scim.tenantId, async (trx) => {
    const { slug } = await enterScimTenant(trx, scim.tenantId, scim.tokenId).catch((err: unknown) => {
      // Revoked since its tenant was remembered (src/http/scim-token.ts).
      if (err instanceof ApiError && err.kind === 'unauthorized') scim.forget?.();
      throw err;
    });
    return run(new InScimTenant(ctx, scim.tenantId, slug, scim.tokenId, trx));
  });
}
