/**
 * Handler typing. The operation ids come from the generated SDK (one function per operation),
 * so the handler map in ./index.ts fails to compile when an operation lacks a handler or a
 * handler has no operation.
 */
import type * as sdk from '../../generated/sdk.gen';
import type { AuthenticatedContext, RequestContext, TenantContext } from '../http/context';

export type OperationId = keyof typeof sdk;

/** The validated parts of a request, typed by the operation's generated `…Data` type. */
export interface HandlerInput<D extends { body?: unknown; path?: unknown; query?: unknown } = { body?: unknown; path?: unknown; query?: unknown }> {
  readonly body: D['body'];
  readonly path: NonNullable<D['path']>;
  readonly query: NonNullable<D['query']>;
  readonly headers: Readonly<Record<string, string | undefined>>;
}

/** A response, typed by the operation's generated `…Responses` type. */
export type Reply<R> = {
  [S in keyof R]: { readonly status: S; readonly body: R[S]; readonly headers?: Readonly<Record<string, string>> };
}[keyof R];

export type HandlerKind = 'public' | 'authenticated' | 'platformAdmin' | 'tenant';

/** What the router calls. Built with `publicOperation`, `authenticated`, `platformAdmin` or `tenantScoped`. */
export interface Handler {
  readonly kind: HandlerKind;
  readonly run: (ctx: RequestContext, input: HandlerInput) => Promise<Reply<Record<number, unknown>>>;
}

// The input/reply generics are erased at the map; each handler's own signature keeps them.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyInput = HandlerInput<any>;
type AnyReply = Reply<Record<number, unknown>>;

/** An operation without security (health, JWKS). */
export function publicOperation<I extends AnyInput, R extends AnyReply>(fn: (ctx: RequestContext, input: I) => Promise<R>): Handler {
  return { kind: 'public', run: fn as unknown as Handler['run'] };
}

/** An operation that needs a verified caller but no tenant. */
export function authenticated<I extends AnyInput, R extends AnyReply>(fn: (ctx: AuthenticatedContext, input: I) => Promise<R>): Handler {
  return { kind: 'authenticated', run: fn as unknown as Handler['run'] };
}

/** An operation only platform admins may call (`/api/setup/*`); others get 403 Forbidden. */
export function platformAdmin<I extends AnyInput, R extends AnyReply>(fn: (ctx: AuthenticatedContext, input: I) => Promise<R>): Handler {
  return { kind: 'platformAdmin', run: fn as unknown as Handler['run'] };
}

/**
 * A tenant-scoped operation: the router resolves the tenant inside a transaction and hands the
 * handler a TenantContext whose `trx` row-level security confines to that tenant.
 */
export function tenantScoped<I extends AnyInput, R extends AnyReply>(fn: (ctx: TenantContext, input: I) => Promise<R>): Handler {
  return { kind: 'tenant', run: fn as unknown as Handler['run'] };
}
