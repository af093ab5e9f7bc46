/**
 * Handler typing. src/handlers/operations.gen.ts (generated from openapi.yaml) gives, per
 * operationId, the generated request/response types and its x-access level; `OperationTable`
 * turns that into the one type the table in ./index.ts must satisfy, so a missing handler, an
 * extra handler, a handler typed for another operation, or a handler whose context does not fit
 * the operation's access level fails `npm run typecheck` (test/types/operation-table.fixture.ts).
 */
import type { AuthenticatedContext, EnteredTenant, RequestContext, ScimContext, TenantContext } from '../context/request';
import type { HandlerInput, HandlerOf, Reply } from '../http/handler-contract';
import type { OperationTypes } from './operations.gen';

export type { HandlerInput, Reply };

export type OperationId = keyof OperationTypes;

type InputOf<K extends OperationId> = HandlerInput<OperationTypes[K]['data']>;
type ReplyOf<K extends OperationId> = Reply<OperationTypes[K]['responses'] & OperationTypes[K]['errors']>;
type AccessOf<K extends OperationId> = OperationTypes[K]['access'];

/** The handler an operation needs, by its x-access level. */
export type HandlerFor<K extends OperationId> = AccessOf<K> extends 'public'
  ? HandlerOf<'public', RequestContext, InputOf<K>, ReplyOf<K>>
  : AccessOf<K> extends 'caller' | 'platformAdmin'
    ? HandlerOf<'caller', AuthenticatedContext, InputOf<K>, ReplyOf<K>>
    : AccessOf<K> extends 'scimToken'
      ? HandlerOf<'scim', ScimContext, InputOf<K>, ReplyOf<K>>
      : HandlerOf<'tenant', TenantContext, InputOf<K>, ReplyOf<K>> | HandlerOf<'tenantRead', EnteredTenant, InputOf<K>, ReplyOf<K>>;

/** The operation table: exactly one handler per operationId of openapi.yaml. */
export type OperationTable = { readonly [K in OperationId]: HandlerFor<K> };

/** Checks a table at compile time: every operation, nothing else, each typed for its operation. */
export function defineOperationTable<T extends OperationTable & Record<Exclude<keyof T, OperationId>, never>>(table: T): OperationTable {
  return table;
}

/** An operation without security (health, JWKS). */
export function publicOperation<I, R>(fn: (ctx: RequestContext, input: I) => Promise<R>): HandlerOf<'public', RequestContext, I, R> {
  return { kind: 'public', run: fn };
}

/** An operation that needs a verified caller (x-access caller or platformAdmin, checked by the pipeline). */
export function authenticated<I, R>(fn: (ctx: AuthenticatedContext, input: I) => Promise<R>): HandlerOf<'caller', AuthenticatedContext, I, R> {
  return { kind: 'caller', run: fn };
}

/**
 * A tenant-scoped operation: the pipeline resolves the tenant inside a transaction and hands the
 * handler a TenantContext whose `trx` row-level security confines to that tenant.
 */
export function tenantScoped<I, R>(fn: (ctx: TenantContext, input: I) => Promise<R>): HandlerOf<'tenant', TenantContext, I, R> {
  return { kind: 'tenant', run: fn };
}

/**
 * A tenant operation that needs nothing but the resolved tenant and membership: they come from
 * one statement (app_tenant_facts, its own transaction), and the handler gets no `trx`.
 */
export function tenantRead<I, R>(fn: (ctx: EnteredTenant, input: I) => Promise<R>): HandlerOf<'tenantRead', EnteredTenant, I, R> {
  return { kind: 'tenantRead', run: fn };
}

/** A SCIM operation (x-access scimToken): run inside the transaction of the tenant its token names. */
export function scimOperation<I, R>(fn: (ctx: ScimContext, input: I) => Promise<R>): HandlerOf<'scim', ScimContext, I, R> {
  return { kind: 'scim', run: fn };
}
