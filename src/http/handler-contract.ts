/**
 * What the dispatch stage calls: a handler of a kind, its input and its reply, with the
 * per-operation types left to src/handlers/types.ts (which checks the table against the
 * contract). Defined here so the pipeline never imports the handlers it runs.
 */

/** The validated parts of a request, typed by the operation's generated `…Data` type. */
export interface HandlerInput<D extends { body?: unknown; path?: unknown; query?: unknown; url: string } = { body?: unknown; path?: unknown; query?: unknown; url: string }> {
  /** The operation's path template (hey-api's `url`): ties the input type to one operation. */
  readonly url: D['url'];
  readonly body: D['body'];
  readonly path: NonNullable<D['path']>;
  readonly query: NonNullable<D['query']>;
  readonly headers: Readonly<Record<string, string | undefined>>;
  /**
   * The unread request body, on an operation whose contract declares a streamed body
   * (`application/x-ndjson`, see ./contract.ts); null on every other operation.
   */
  readonly bodyStream?: NodeJS.ReadableStream | null;
}

/** A response, typed by the operation's generated `…Responses` type. */
export type Reply<R> = {
  [S in keyof R]: {
    readonly status: S;
    readonly body: R[S];
    readonly headers?: Readonly<Record<string, string>>;
    /**
     * A body written as a stream (an export): the pipeline sends status and headers, then lets
     * it write, then ends the response; `body` is then unused. A failure after the first byte
     * can only cut the response short.
     */
    readonly stream?: (out: NodeJS.WritableStream) => Promise<void>;
  };
}[keyof R];

/**
 * How the pipeline runs a handler: `public` and `caller` get a RequestContext /
 * AuthenticatedContext; `tenant` runs inside the tenant's transaction; `tenantRead` gets the
 * entered tenant from one statement (no transaction is left open for it); `scim` runs inside the
 * transaction of the tenant its SCIM token names.
 */
export type HandlerKind = 'public' | 'caller' | 'tenant' | 'tenantRead' | 'scim';

export interface HandlerOf<Kind extends HandlerKind, C, I, R> {
  readonly kind: Kind;
  // A property, not a method: function parameters are then checked contravariantly.
  readonly run: (ctx: C, input: I) => Promise<R>;
}

/** What the pipeline calls, with the per-operation types erased (checked by OperationTable). */
export type AnyHandler = HandlerOf<HandlerKind, never, never, Reply<Record<number, unknown>>>;
