/**
 * Handler typing. src/handlers/operations.gen.ts (generated from openapi.yaml) gives, per
 * operationId, the generated request/response types and its x-access level; `OperationTable`
 * turns that into the one type the table in ./index.ts must satisfy, so a missing handler, an
 * extra handler, a handler typed for another operation, or a handler whose context does not fit
 * the operation's access level fails `npm run typecheck` (test/types/operation-table.fixture.ts).
 */
import type { AuthenticatedContext, RequestContext, EnteredTenant, TenantContext } from '../http/context';
import type { OperationTypes } from './operations.gen';

export type OperationId = keyof OperationTypes;

/** The validated parts of a request, typed by the operation's generated `…Data` type. */
export interface HandlerInput<D extends { body?: unknown; path?: unknown; query?: unknown; url: string } = { body?: unknown; path?: unknown; query?: unknown; url: string }> {
  /** The operation's path template (hey-api's `url`): ties the input type to one operation. */
  readonly url: D['url'];
  readonly body: D['body'];
  readonly path: NonNullable<D['path']>;
  readonly query: NonNullable<D['query']>;
  readonly headers: Readonly<Record<string, string | undefined>>;
}

/** A response, typed by the operation's generated `…Responses` type. */
export type Reply<R> = {
  [S in keyof R]: { readonly status: S; readonly body: R[S]; readonly headers?: Readonly<Record<string, string>> };
}[keyof R];

/**
 * How the pipeline runs a handler: `public` and `caller` get a RequestContext /
 * AuthenticatedContext; `tenant` runs inside the tenant's transaction; `tenantRead` gets the
 * entered tenant from one statement (no transaction is left open for it).
 */
export type HandlerKind = 'public' | 'caller' | 'tenant' | 'tenantRead';

interface HandlerOf<Kind extends HandlerKind, C, I, R> {
  readonly kind: Kind;
  // A property, not a method: function parameters are then checked contravariantly.
  readonly run: (ctx: C, input: I) => Promise<R>;
}

type InputOf<K extends OperationId> = HandlerInput<OperationTypes[K]['data']>;
type ReplyOf<K extends OperationId> = Reply<OperationTypes[K]['responses'] & OperationTypes[K]['errors']>;
type AccessOf<K extends OperationId> = OperationTypes[K]['access'];

/** The handler an operation needs, by its x-access level. */
export type HandlerFor<K extends OperationId> = AccessOf<K> extends 'public'
  ? HandlerOf<'public', RequestContext, InputOf<K>, ReplyOf<K>>
  : AccessOf<K> extends 'caller' | 'platformAdmin'
    ? HandlerOf<'caller', AuthenticatedContext, InputOf<K>, ReplyOf<K>>
    : HandlerOf<'tenant', TenantContext, InputOf<K>, ReplyOf<K>> | HandlerOf<'tenantRead', EnteredTenant, InputOf<K>, ReplyOf<K>>;

/** The operation table: exactly one handler per operationId of openapi.yaml. */
export type OperationTable = { readonly [K in OperationId]: HandlerFor<K> };

/** Checks a table at compile time: every operation, nothing else, each typed for its operation. */
export function defineOperationTable<T extends OperationTable & Record<Exclude<keyof T, OperationId>, never>>(table: T): OperationTable {
  return table;
}

/** What the pipeline calls, with the per-operation types erased (checked by OperationTable). */
export type AnyHandler = HandlerOf<HandlerKind, never, never, Reply<Record<number, unknown>>>;

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
