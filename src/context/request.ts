/**
 * The typed request context handed to every handler: no hidden globals for auth or tenant.
 * Part of the neutral module (src/context) that every layer may read.
 */
import type { Logger } from 'pino';
import type { Caller, TenantSource } from './claims';
import type { Config } from '../config';
import type { Transaction } from '../db/tenant-scope';
import type { AppServices } from './app-services';
import type { Membership, Tenant } from './entities';
import type { EventOrigin } from './origin';

export interface RequestContext {
  readonly requestId: string;
  /** The client address (express's req.ip: X-Forwarded-For only with SERVICE_TRUST_PROXY). */
  readonly ip: string | null;
  readonly log: Logger;
  /** The verified caller; null only on operations without security (health, JWKS). */
  readonly caller: Caller | null;
  readonly config: Config;
  readonly services: AppServices;
  /** Who the events of this request's changes name: built once per request by the pipeline. */
  readonly origin: EventOrigin;
}

/** A caller that is known to be authenticated. */
export interface AuthenticatedContext extends RequestContext {
  readonly caller: Caller;
}


/** The resolved tenant of a request and the caller's place in it (docs/tenants.md#tenant-resolution). */
export interface EnteredTenant extends AuthenticatedContext {
  readonly tenant: Tenant;
  /** The caller's membership; null for a platform admin who is not a member. */
  readonly membership: Membership | null;
  readonly source: TenantSource;
}

/** Context of a tenant-scoped operation: the resolved tenant and its open transaction. */
export interface TenantContext extends EnteredTenant {
  /** The request's transaction, with app.tenant_id set: row-level security confines it to `tenant`. */
  readonly trx: Transaction;
}

/**
 * Context of a SCIM operation (docs/directory-sync.md): the tenant its token names, the token's
 * id (the actor of the directory's changes), and the tenant's open transaction.
 */
export interface ScimContext extends RequestContext {
  readonly tenantId: string;
  readonly tenantSlug: string;
  readonly tokenId: string;
  /** The SCIM base URL (`<public URL>/scim/v2`) the resources' locations start with. */
  readonly base: string;
  /** The request's transaction, with app.tenant_id set: row-level security confines it to the tenant. */
  readonly trx: Transaction;
}
