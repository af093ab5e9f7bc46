/**
 * The audit log (docs/events.md#events-and-webhooks). Every state-changing domain function calls
 * `recordEvent` with its own transaction, so an event exists exactly when its change committed, and
 * the webhook outbox rows are written by the same statement as the event.
 */
import crypto from 'node:crypto';
import { insertEventWithDeliveries, selectEventChunk } from '../db/queries/events';
import { withPlatformRead, type Database, type Transaction } from '../db/tenant-scope';
import { ApiError } from '../errors';
import { DEFAULT_EVENT_SETTINGS_KEYS, fitJson, freeForm, MAX_EVENT_DATA_BYTES, shapeEventData } from './event-data';
import { decodeCursor, encodeCursor } from './pagination';
import type { EventAction } from '../context/event-actions';
import type { IdentityLink, Member, Tenant } from '../context/entities';
import type { StoredEvent, StoredEventOfPage } from '../context/records';
import type { EventOrigin } from '../context/origin';

export { freeForm } from './event-data';

export { EVENT_ACTIONS, type EventAction } from '../context/event-actions';

export { SYSTEM_ORIGIN, type EventActor, type EventOrigin } from '../context/origin';

/** What changed. `data` is the affected object (updates: `before` and `after` of the changed fields). */
export interface NewEvent {
  readonly action: EventAction;
  /** The tenant the change belongs to; null for platform-wide changes (webhooks). */
  readonly tenantId: string | null;
  readonly target: { readonly type: string; readonly id: string | null };
  readonly data: Record<string, unknown>;
  /**
   * The tenant the change is about, shown first as `data.tenant` the way every event shows a
   * tenant (`tenantData`; with `identity_links` when given): callers pass the domain object, this
   * module decides what of it an event carries.
   */
  readonly about?: { readonly tenant: Tenant; readonly identityLinks?: readonly IdentityLink[] };
}

/** An event as the API and webhooks show it. */
export interface EventBody {
  event_id: string;
  occurred_at: string;
  action: string;
  tenant_id: string | null;
  /** `{platform_admin: true}` alone when a tenant admin reads a platform admin's change. */
  actor: { issuer?: string | null; subject?: string | null; email?: string | null; platform_admin: boolean; directory?: true; token_id?: string };
  target: { type: string; id: string | null };
  request_id: string | null;
  ip: string | null;
  data: Record<string, unknown>;
}

let recording = true;

/**
 * Benchmark only (bench/scenarios/events.ts, in its own worker thread): measures the service
 * with event recording off, to report what recording costs. Never called by the service.
 */
export function setEventRecordingForBenchmark(on: boolean): void {
  recording = on;
}

/**
 * Appends one event inside `trx` (the change's own transaction) and queues it for every enabled
 * webhook endpoint subscribed to its action. Returns the event as the API shows it.
 */
export async function recordEvent(trx: Transaction, origin: EventOrigin, event: NewEvent): Promise<EventBody> {
  const about = event.about;
  const data = about
    ? { tenant: { ...tenantData(about.tenant), ...(about.identityLinks?.length ? { identity_links: linksData(about.identityLinks) } : {}) }, ...event.data }
    : event.data;
  const row: StoredEvent = {
    id: crypto.randomUUID(),
    occurred_at: new Date(),
    action: event.action,
    tenant_id: event.tenantId,
    actor_issuer: origin.actor.issuer,
    actor_subject: origin.actor.subject,
    actor_email: origin.actor.email,
    actor_platform_admin: origin.actor.platformAdmin,
    actor_scim_token_id: origin.actor.scimTokenId ?? null,
    target_type: event.target.type,
    target_id: event.target.id,
    request_id: origin.requestId,
    ip: origin.ip,
    // Free-form objects reduced to the allow-list, the whole cut to MAX_EVENT_DATA_BYTES: the
    // webhook payload below is built from this row, so receivers get the same shaped data.
    data: shapeEventData(data, { settingsKeys: origin.settingsKeys ?? DEFAULT_EVENT_SETTINGS_KEYS, tenantId: event.tenantId }),
  };
  const body = toEventBody(row);
  if (!recording) return body;
  // The Standard Webhooks payload: {type, timestamp, data}.
  await insertEventWithDeliveries(trx, row, { type: body.action, timestamp: body.occurred_at, data: body });
  return body;
}

/** The fields of a tenant an event carries; `settings` only as far as SERVICE_EVENT_SETTINGS_KEYS allows. */
export function tenantData(t: Tenant): Record<string, unknown> {
  return { tenant_id: t.id, name: t.name, slug: t.slug, settings: freeForm(t.settings), status: t.status, is_default: t.isDefault };
}

/** Identity links as events (and the create's idempotency hash) spell them. */
export const linksData = (links: readonly IdentityLink[]) => links.map((l) => ({ issuer: l.issuer, organization_id: l.organizationId }));

/** The fields of a member an event carries. */
export function memberData(m: Pick<Member, 'userId' | 'issuer' | 'subject' | 'email' | 'displayName' | 'role'>): Record<string, unknown> {
  return { user_id: m.userId, issuer: m.issuer, subject: m.subject, email: m.email, display_name: m.displayName, role: m.role };
}

/** The changed fields of an update as `{before, after}` (only keys whose values differ). */
export function changedFields<T extends Record<string, unknown>>(before: T, after: Partial<T>): { before: Partial<T>; after: Partial<T> } {
  const b: Partial<T> = {};
  const a: Partial<T> = {};
  for (const key of Object.keys(after) as Array<keyof T>) {
    if (after[key] === undefined) continue;
    if (JSON.stringify(before[key]) !== JSON.stringify(after[key])) {
      b[key] = before[key];
      a[key] = after[key];
    }
  }
  return { before: b, after: a };
}

/** Who reads: platform admins see every actor whole; tenant admins never see a platform admin's identity. */
export type EventView = 'platform' | 'tenant';

export function toEventBody(r: StoredEvent, view: EventView = 'platform'): EventBody {
  // The operator's client address identifies them as well as their subject does.
  const hidden = view === 'tenant' && r.actor_platform_admin;
  return {
    event_id: r.id,
    occurred_at: (r.occurred_at instanceof Date ? r.occurred_at : new Date(r.occurred_at)).toISOString(),
    action: r.action,
    tenant_id: r.tenant_id,
    actor: hidden
      ? { platform_admin: true }
      : r.actor_scim_token_id
        ? { directory: true, token_id: r.actor_scim_token_id, platform_admin: false }
        : { issuer: r.actor_issuer, subject: r.actor_subject, email: r.actor_email, platform_admin: r.actor_platform_admin },
    target: { type: r.target_type, id: r.target_id },
    request_id: r.request_id,
    ip: hidden ? null : r.ip,
    data: r.data,
  };
}

// ---------------------------------------------------------------------------------------------
// Reading

export interface EventQuery {
  tenantId?: string;
  action?: string;
  actorSubject?: string;
  since?: string;
  until?: string;
  limit?: number;
  cursor?: string;
}

export interface EventPage {
  events: EventBody[];
  nextCursor: string | null;
}

export const DEFAULT_EVENT_PAGE = 100;

/**
 * The largest events page, in bytes of its JSON body (docs/event-data.md#pages-bounded-in-bytes: at
 * most 4 MiB). One response is parsed and serialised in one go on the event loop, and 256 KiB pages
 * stall other callers far less than 1 MiB ones (bench/scenarios/events.ts, large_reads).
 */
export const MAX_EVENT_PAGE_BYTES = 256 * 1024;
/** What the page's events may take: the rest is its envelope and `next_cursor`. */
const PAGE_EVENTS_BUDGET = MAX_EVENT_PAGE_BYTES - 1024;
/**
 * Stored data longer than this as PostgreSQL's jsonb text is replaced by the marker in SQL, so
 * such a row never reaches the process (events written before the 16 KiB bound). jsonb text
 * spends at most 1.5 bytes per byte of compact JSON, so no row written since is ever cut here.
 */
const READ_CAP_JSONB_TEXT = (MAX_EVENT_DATA_BYTES * 3) / 2 + 1024;

function validated(q: EventQuery): { limit: number; after?: { occurredAt: string; id: string } } {
  const limit = q.limit ?? DEFAULT_EVENT_PAGE;
  if (!Number.isInteger(limit) || limit < 1 || limit > 1000) throw new ApiError('validation', 'query.limit must be an integer from 1 to 1000.');
  for (const [name, v] of [['since', q.since], ['until', q.until]] as const) {
    if (v !== undefined && Number.isNaN(Date.parse(v))) throw new ApiError('validation', `query.${name} must be an ISO 8601 date-time.`);
  }
  if (q.cursor === undefined) return { limit };
  const p = decodeCursor(q.cursor);
  return { limit, after: { occurredAt: p.createdAt, id: p.id } };
}

/** Rows read by a page's first statement; later ones are sized by the bytes left. */
const FIRST_CHUNK_ROWS = 128;

/**
 * One page: at most `limit` events and at most MAX_EVENT_PAGE_BYTES. Rows are read in chunks,
 * each cut in SQL where an upper bound of the rows' JSON passes the bytes left, so the process
 * never holds more than one page and PostgreSQL serialises few rows the page cannot hold.
 */
async function page(trx: Transaction, q: EventQuery, tenantId: string | undefined, view: EventView): Promise<EventPage> {
  const { limit, after } = validated(q);
  const filter = {
    tenantId,
    action: q.action,
    actorSubject: q.actorSubject,
    // A tenant admin's actor filter must not confirm who a hidden platform admin is.
    actorSubjectSkipsPlatformAdmins: view === 'tenant',
    since: q.since,
    until: q.until,
    dataCapJsonbText: READ_CAP_JSONB_TEXT,
  };
  const rows: StoredEventOfPage[] = [];
  let budget = PAGE_EVENTS_BUDGET;
  let position = after;
  let wanted = limit + 1; // one more than shown tells whether another page follows
  let chunk = Math.min(wanted, FIRST_CHUNK_ROWS);
  let cut = false;
  for (;;) {
    const r = await selectEventChunk(trx, { ...filter, after: position, rows: chunk, byteBudget: budget, keepFirst: rows.length === 0 });
    rows.push(...r.rows);
    budget -= r.bytes;
    wanted -= r.rows.length;
    if (r.rows.length < r.fetched) {
      cut = true; // the bytes ran out before the rows did
      break;
    }
    if (r.fetched < chunk || wanted <= 0) break;
    const last = r.rows[r.rows.length - 1]!;
    position = { occurredAt: last.cursor_ts, id: last.id };
    const average = (PAGE_EVENTS_BUDGET - budget) / rows.length;
    chunk = Math.min(wanted, Math.max(FIRST_CHUNK_ROWS, Math.ceil(budget / average) + 1));
  }
  const shown = rows.slice(0, limit);
  const lastShown = shown[shown.length - 1];
  const events = shown.map((r) => {
    // Only rows stored before the bound can be over it; cut them like new ones.
    const data = r.data_bytes > MAX_EVENT_DATA_BYTES ? (fitJson(r.data, MAX_EVENT_DATA_BYTES) as Record<string, unknown>) : r.data;
    return toEventBody({ ...r, data }, view);
  });
  const more = cut || rows.length > limit;
  return { events, nextCursor: more && lastShown ? encodeCursor({ createdAt: lastShown.cursor_ts, id: lastShown.id }) : null };
}

/** Events of every tenant and platform-wide ones, newest first (platform admins; reader role). */
export async function listEvents(db: Database, q: EventQuery): Promise<EventPage> {
  validated(q); // a bad cursor or date is a 400 before any query
  return withPlatformRead(db, (trx) => page(trx, q, q.tenantId, 'platform'));
}

/**
 * Events of the request's tenant, newest first, read in its transaction: row-level security
 * shows only this tenant's rows whatever the filter says. A platform admin's changes show
 * their actor as `{platform_admin: true}` only.
 */
export async function listTenantEvents(trx: Transaction, tenantId: string, q: Omit<EventQuery, 'tenantId'>): Promise<EventPage> {
  return page(trx, q, tenantId, 'tenant');
}
