/**
 * The audit log (PRODUCT.md §11). Every state-changing domain function calls `recordEvent` with
 * its own transaction, so an event exists exactly when its change committed, and the webhook
 * outbox rows are written by the same statement as the event.
 */
import crypto from 'node:crypto';
import { insertEventWithDeliveries, selectEvents, type EventRow } from '../db/queries/events';
import { withPlatformRead, type Database, type Transaction } from '../db/tenant-scope';
import { ApiError } from '../errors';
import { decodeCursor, encodeCursor } from './pagination';

/** Every action the service records. */
export const EVENT_ACTIONS = [
  'tenant.created',
  'tenant.registered',
  'tenant.updated',
  'tenant.approved',
  'tenant.deleted',
  'member.added',
  'member.provisioned',
  'member.role_changed',
  'member.removed',
  'member.left',
  'invitation.created',
  'invitation.resent',
  'invitation.revoked',
  'invitation.accepted',
  'webhook.created',
  'webhook.updated',
  'webhook.deleted',
  'board.created',
  'tenant_token.key_rotated',
] as const;
export type EventAction = (typeof EVENT_ACTIONS)[number];

/** Who made a change: the verified caller of the request (null fields for the service itself). */
export interface EventActor {
  readonly issuer: string | null;
  readonly subject: string | null;
  readonly email: string | null;
  readonly platformAdmin: boolean;
}

/** Where a change came from: actor, request id and client address. Built once per request. */
export interface EventOrigin {
  readonly actor: EventActor;
  readonly requestId: string | null;
  readonly ip: string | null;
}

/** What changed. `data` is the affected object (updates: `before` and `after` of the changed fields). */
export interface NewEvent {
  readonly action: EventAction;
  /** The tenant the change belongs to; null for platform-wide changes (webhooks). */
  readonly tenantId: string | null;
  readonly target: { readonly type: string; readonly id: string | null };
  readonly data: Record<string, unknown>;
}

/** An event as the API and webhooks show it. */
export interface EventBody {
  event_id: string;
  occurred_at: string;
  action: string;
  tenant_id: string | null;
  actor: { issuer: string | null; subject: string | null; email: string | null; platform_admin: boolean };
  target: { type: string; id: string | null };
  request_id: string | null;
  ip: string | null;
  data: Record<string, unknown>;
}

/** The event origin of a request context (anything with requestId, ip and caller). */
export function originOf(ctx: {
  readonly requestId: string;
  readonly ip?: string | null;
  readonly caller: { readonly issuer: string; readonly subject: string; readonly email: string | null; readonly isPlatformAdmin: boolean } | null;
}): EventOrigin {
  const c = ctx.caller;
  return {
    actor: { issuer: c?.issuer ?? null, subject: c?.subject ?? null, email: c?.email ?? null, platformAdmin: c?.isPlatformAdmin ?? false },
    requestId: ctx.requestId,
    ip: ctx.ip ?? null,
  };
}

/** The origin of changes the service makes on its own (no request, no caller). */
export const SYSTEM_ORIGIN: EventOrigin = { actor: { issuer: null, subject: null, email: null, platformAdmin: false }, requestId: null, ip: null };

// Keys never written into an event's data, at any depth: secrets and tokens stay out of the log
// and out of webhook payloads even if a caller passes an object that carries one (tenant
// settings are free-form: `apiKey`, `stripe_secret_key`, `privateKey`, `credentials`, …).
const SECRET_KEY = /secret|token|passw|api_?key|private_?key|access_?key|credential/i;

/** `value` with every secret-named key dropped at any depth (exported for its unit test). */
export function withoutSecrets(value: unknown, depth = 0): unknown {
  if (depth > 32) return null;
  if (Array.isArray(value)) return value.map((v) => withoutSecrets(v, depth + 1));
  if (value instanceof Date) return value.toISOString();
  if (value !== null && typeof value === 'object') {
    // No prototype: a `__proto__` key in a caller's settings stays plain data.
    const out = Object.create(null) as Record<string, unknown>;
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
      if (SECRET_KEY.test(k) || v === undefined) continue;
      out[k] = withoutSecrets(v, depth + 1);
    }
    return out;
  }
  return value;
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
  const row: EventRow = {
    id: crypto.randomUUID(),
    occurred_at: new Date(),
    action: event.action,
    tenant_id: event.tenantId,
    actor_issuer: origin.actor.issuer,
    actor_subject: origin.actor.subject,
    actor_email: origin.actor.email,
    actor_platform_admin: origin.actor.platformAdmin,
    target_type: event.target.type,
    target_id: event.target.id,
    request_id: origin.requestId,
    ip: origin.ip,
    data: withoutSecrets(event.data) as Record<string, unknown>,
  };
  const body = toEventBody(row);
  if (!recording) return body;
  // The Standard Webhooks payload: {type, timestamp, data}.
  await insertEventWithDeliveries(trx, row, { type: body.action, timestamp: body.occurred_at, data: body });
  return body;
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

export function toEventBody(r: EventRow): EventBody {
  return {
    event_id: r.id,
    occurred_at: (r.occurred_at instanceof Date ? r.occurred_at : new Date(r.occurred_at)).toISOString(),
    action: r.action,
    tenant_id: r.tenant_id,
    actor: { issuer: r.actor_issuer, subject: r.actor_subject, email: r.actor_email, platform_admin: r.actor_platform_admin },
    target: { type: r.target_type, id: r.target_id },
    request_id: r.request_id,
    ip: r.ip,
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

async function page(trx: Transaction, q: EventQuery, tenantId: string | undefined): Promise<EventPage> {
  const { limit, after } = validated(q);
  const rows = await selectEvents(trx, { tenantId, action: q.action, actorSubject: q.actorSubject, since: q.since, until: q.until, after, limit });
  const more = rows.length > limit;
  const shown = more ? rows.slice(0, limit) : rows;
  const last = shown[shown.length - 1];
  return { events: shown.map(toEventBody), nextCursor: more && last ? encodeCursor({ createdAt: last.cursor_ts, id: last.id }) : null };
}

/** Events of every tenant and platform-wide ones, newest first (platform admins; reader role). */
export async function listEvents(db: Database, q: EventQuery): Promise<EventPage> {
  validated(q); // a bad cursor or date is a 400 before any query
  return withPlatformRead(db, (trx) => page(trx, q, q.tenantId));
}

/**
 * Events of the request's tenant, newest first, read in its transaction: row-level security
 * shows only this tenant's rows whatever the filter says.
 */
export async function listTenantEvents(trx: Transaction, tenantId: string, q: Omit<EventQuery, 'tenantId'>): Promise<EventPage> {
  return page(trx, q, tenantId);
}
