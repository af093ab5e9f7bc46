/**
 * The typed request context handed to every handler: no hidden globals for auth or tenant.
 */
import type { Knex } from 'knex';
import type { Logger } from 'pino';
import type { Caller } from '../auth/verify';
import type { Config } from '../config';
import type { TenantSource } from '../tenancy/resolve';
import type { AppServices } from './services';

export interface RequestContext {
  readonly requestId: string;
  readonly log: Logger;
  /** The verified caller; null only on operations without security (health, JWKS). */
  readonly caller: Caller | null;
  readonly config: Config;
  readonly services: AppServices;
}

/** A caller that is known to be authenticated. */
export interface AuthenticatedContext extends RequestContext {
  readonly caller: Caller;
}

export interface ResolvedTenant {
  readonly id: string;
  readonly name: string;
  readonly slug: string;
  readonly settings: Record<string, unknown>;
  readonly status: 'active' | 'pending_approval';
  readonly isDefault: boolean;
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

export interface Membership {
  readonly userId: string;
  readonly issuer: string;
  readonly subject: string;
  readonly email: string | null;
  readonly displayName: string | null;
  readonly role: 'admin' | 'member';
  readonly createdAt: Date;
}

/** Context of a tenant-scoped operation: the resolved tenant and its open transaction. */
export interface TenantContext extends AuthenticatedContext {
  readonly tenant: ResolvedTenant;
  /** The caller's membership; null for a platform admin who is not a member. */
  readonly membership: Membership | null;
  readonly source: TenantSource;
  /** The request's transaction, with app.tenant_id set: row-level security confines it to `tenant`. */
  readonly trx: Knex.Transaction;
}
