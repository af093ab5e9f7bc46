/**
 * SQL of the audit log: one statement that appends an event and writes its webhook outbox rows,
 * and the newest-first keyset page the read APIs share.
 */
import type { Knex } from 'knex';

/** An `events` row as stored. */
export interface EventRow {
  id: string;
  occurred_at: Date;
  action: string;
  tenant_id: string | null;
  actor_issuer: string | null;
  actor_subject: string | null;
  actor_email: string | null;
  actor_platform_admin: boolean;
  target_type: string;
  target_id: string | null;
  request_id: string | null;
  ip: string | null;
  data: Record<string, unknown>;
}

/**
 * Appends `row` and, in the same statement, one pending delivery per enabled webhook endpoint
 * whose patterns match the action (`tenant.created`, `tenant.*` or `*`), each carrying `payload`.
 * No RETURNING: a platform transaction may write a tenant's event it is not allowed to read.
 */
export async function insertEventWithDeliveries(trx: Knex.Transaction, row: EventRow, payload: unknown): Promise<void> {
  const category = `${row.action.slice(0, row.action.indexOf('.'))}.*`;
  await trx.raw(
    `with ev as (
       insert into events (id, occurred_at, action, tenant_id, actor_issuer, actor_subject, actor_email, actor_platform_admin,
                           target_type, target_id, request_id, ip, data)
       values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?::jsonb)
     )
     insert into webhook_deliveries (webhook_id, event_id, event_type, tenant_id, payload)
     select w.id, ?, ?, ?, ?::jsonb from webhook_endpoints w
      where w.enabled and (? = any(w.event_types) or ? = any(w.event_types) or '*' = any(w.event_types))`,
    [
      row.id,
      row.occurred_at,
      row.action,
      row.tenant_id,
      row.actor_issuer,
      row.actor_subject,
      row.actor_email,
      row.actor_platform_admin,
      row.target_type,
      row.target_id,
      row.request_id,
      row.ip,
      JSON.stringify(row.data),
      row.id,
      row.action,
      row.tenant_id,
      JSON.stringify(payload),
      row.action,
      category,
    ],
  );
}

export interface EventFilter {
  /** Only this tenant's events (the tenant-scoped read also relies on row-level security). */
  tenantId?: string;
  action?: string;
  actorSubject?: string;
  since?: string;
  until?: string;
  /** Start after this (occurred_at, id), newest first. */
  after?: { occurredAt: string; id: string };
  limit: number;
}

/** `limit + 1` rows newest first, each with `cursor_ts` (occurred_at as microsecond UTC text). */
export async function selectEvents(trx: Knex.Transaction, f: EventFilter): Promise<Array<EventRow & { cursor_ts: string }>> {
  const q = trx('events')
    .select('*', trx.raw(`to_char(occurred_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as cursor_ts`))
    .orderBy([
      { column: 'occurred_at', order: 'desc' },
      { column: 'id', order: 'desc' },
    ])
    .limit(f.limit + 1);
  if (f.tenantId !== undefined) q.where('tenant_id', f.tenantId);
  if (f.action !== undefined) q.where('action', f.action);
  if (f.actorSubject !== undefined) q.where('actor_subject', f.actorSubject);
  if (f.since !== undefined) q.where('occurred_at', '>=', f.since);
  if (f.until !== undefined) q.where('occurred_at', '<', f.until);
  if (f.after) q.whereRaw('(occurred_at, id) < (?::timestamptz, ?::uuid)', [f.after.occurredAt, f.after.id]);
  return (await q) as Array<EventRow & { cursor_ts: string }>;
}
