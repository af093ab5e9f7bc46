/**
 * Where a change came from (the actor, request id and client address an event records), built
 * once per request by the pipeline and handed to handlers as `ctx.origin`
 * (docs/events.md#events-and-webhooks). Part of the neutral module every layer may read.
 */

/** Who made a change: the verified caller of the request (null fields for the service itself). */
export interface EventActor {
  readonly issuer: string | null;
  readonly subject: string | null;
  readonly email: string | null;
  readonly platformAdmin: boolean;
  /** A directory change: the SCIM token it came through (docs/directory-sync.md#events). */
  readonly scimTokenId?: string | null;
}

/** Where a change came from: actor, request id and client address. Built once per request. */
export interface EventOrigin {
  readonly actor: EventActor;
  readonly requestId: string | null;
  readonly ip: string | null;
  /** SERVICE_EVENT_SETTINGS_KEYS of the service the request came to (default when absent). */
  readonly settingsKeys?: readonly string[];
}

/** The event origin of a request context (anything with requestId, ip and caller). */
export function requestOrigin(ctx: {
  readonly requestId: string;
  readonly ip?: string | null;
  readonly caller: { readonly issuer: string; readonly subject: string; readonly email: string | null; readonly isPlatformAdmin: boolean } | null;
  readonly config?: { readonly eventSettingsKeys: readonly string[] };
}): EventOrigin {
  const c = ctx.caller;
  return {
    actor: { issuer: c?.issuer ?? null, subject: c?.subject ?? null, email: c?.email ?? null, platformAdmin: c?.isPlatformAdmin ?? false },
    requestId: ctx.requestId,
    ip: ctx.ip ?? null,
    settingsKeys: ctx.config?.eventSettingsKeys,
  };
}

/** The origin of a directory's change through a SCIM token: `{directory: true, token_id}`. */
export function directoryOrigin(tokenId: string, requestId: string, ip: string | null): EventOrigin {
  return { actor: { issuer: null, subject: null, email: null, platformAdmin: false, scimTokenId: tokenId }, requestId, ip };
}

/** The origin of changes the service makes on its own (no request, no caller). */
export const SYSTEM_ORIGIN: EventOrigin = { actor: { issuer: null, subject: null, email: null, platformAdmin: false }, requestId: null, ip: null };

