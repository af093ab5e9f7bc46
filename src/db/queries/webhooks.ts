/**
 * SQL of webhook endpoints, the delivery outbox and its attempts. Endpoints are platform-level
 * rows (no tenant, no row-level security), managed by platform admins only.
 */
import type { Knex } from 'knex';

export interface WebhookEndpointRow {
  id: string;
  url: string;
  description: string | null;
  event_types: string[];
  enabled: boolean;
  secret: string;
  created_at: Date;
  updated_at: Date;
}

export interface WebhookDeliveryRow {
  id: string;
  webhook_id: string;
  event_id: string;
  event_type: string;
  tenant_id: string | null;
  status: 'pending' | 'delivered' | 'failed';
  attempts: number;
  next_attempt_at: Date;
  created_at: Date;
  finished_at: Date | null;
}

export interface WebhookAttemptRow {
  delivery_id: string;
  attempt: number;
  attempted_at: Date;
  status_code: number | null;
  duration_ms: number;
  error: string | null;
  next_retry_at: Date | null;
}

export async function insertWebhookEndpoint(
  trx: Knex.Transaction,
  e: { url: string; description: string | null; eventTypes: string[]; enabled: boolean; secret: string },
): Promise<WebhookEndpointRow> {
  const [row] = (await trx('webhook_endpoints')
    .insert({ url: e.url, description: e.description, event_types: e.eventTypes, enabled: e.enabled, secret: e.secret })
    .returning('*')) as WebhookEndpointRow[];
  return row!;
}

/** Every endpoint, oldest first (there are few: they are configured by hand). */
export async function selectWebhookEndpoints(db: Knex | Knex.Transaction): Promise<WebhookEndpointRow[]> {
  return (await db('webhook_endpoints').select('*').orderBy([{ column: 'created_at' }, { column: 'id' }]).limit(1000)) as WebhookEndpointRow[];
}

export async function selectWebhookEndpoint(db: Knex | Knex.Transaction, id: string, forUpdate = false): Promise<WebhookEndpointRow | undefined> {
  const q = db('webhook_endpoints').where({ id }).first();
  if (forUpdate) q.forUpdate();
  return (await q) as WebhookEndpointRow | undefined;
}

export async function updateWebhookEndpoint(
  trx: Knex.Transaction,
  id: string,
  changes: Partial<Pick<WebhookEndpointRow, 'url' | 'description' | 'event_types' | 'enabled'>>,
): Promise<WebhookEndpointRow> {
  const [row] = (await trx('webhook_endpoints')
    .where({ id })
    .update({ ...changes, updated_at: trx.fn.now() })
    .returning('*')) as WebhookEndpointRow[];
  return row!;
}

/** Deletes the endpoint; its deliveries (pending ones included) go with it. */
export async function deleteWebhookEndpoint(trx: Knex.Transaction, id: string): Promise<number> {
  return trx('webhook_endpoints').where({ id }).delete();
}

/** One page of an endpoint's deliveries, newest first, each row with `cursor_ts`. */
export async function selectDeliveries(
  db: Knex | Knex.Transaction,
  webhookId: string,
  opts: { limit: number; after?: { createdAt: string; id: string } },
): Promise<Array<WebhookDeliveryRow & { cursor_ts: string }>> {
  const q = db('webhook_deliveries')
    .where({ webhook_id: webhookId })
    .select(
      'id',
      'webhook_id',
      'event_id',
      'event_type',
      'tenant_id',
      'status',
      'attempts',
      'next_attempt_at',
      'created_at',
      'finished_at',
      db.raw(`to_char(created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as cursor_ts`),
    )
    .orderBy([
      { column: 'created_at', order: 'desc' },
      { column: 'id', order: 'desc' },
    ])
    .limit(opts.limit + 1);
  if (opts.after) q.whereRaw('(created_at, id) < (?::timestamptz, ?::uuid)', [opts.after.createdAt, opts.after.id]);
  return (await q) as Array<WebhookDeliveryRow & { cursor_ts: string }>;
}

export async function selectAttempts(db: Knex | Knex.Transaction, deliveryIds: readonly string[]): Promise<WebhookAttemptRow[]> {
  if (deliveryIds.length === 0) return [];
  return (await db('webhook_delivery_attempts')
    .whereIn('delivery_id', deliveryIds)
    .orderBy([{ column: 'delivery_id' }, { column: 'attempt' }])) as WebhookAttemptRow[];
}

/** A due delivery claimed by the worker: locked until `trx` ends, skipped by every other worker. */
export interface ClaimedDelivery {
  id: string;
  event_id: string;
  attempts: number;
  payload: unknown;
  url: string;
  secret: string;
}

/**
 * Locks the oldest due pending delivery of an enabled endpoint (FOR UPDATE SKIP LOCKED: a row
 * another instance holds is skipped, never waited for). The lock lasts until `trx` ends, so if
 * this process dies mid-attempt the row is pending and free again the moment its connection drops.
 */
export async function claimDueDelivery(trx: Knex.Transaction): Promise<ClaimedDelivery | null> {
  const r = await trx.raw<{ rows: ClaimedDelivery[] }>(
    `select d.id, d.event_id, d.attempts, d.payload, w.url, w.secret
       from webhook_deliveries d join webhook_endpoints w on w.id = d.webhook_id
      where d.status = 'pending' and d.next_attempt_at <= now() and w.enabled
      order by d.next_attempt_at, d.id
      limit 1
      for update of d skip locked`,
  );
  return r.rows[0] ?? null;
}

/** Stores one attempt and moves the delivery on: delivered, failed, or pending until `nextRetryAt`. */
export async function recordDeliveryAttempt(
  trx: Knex.Transaction,
  a: { deliveryId: string; attempt: number; attemptedAt: Date; statusCode: number | null; durationMs: number; error: string | null; outcome: 'delivered' | 'failed' | 'retry'; nextRetryAt: Date | null },
): Promise<void> {
  await trx('webhook_delivery_attempts').insert({
    delivery_id: a.deliveryId,
    attempt: a.attempt,
    attempted_at: a.attemptedAt,
    status_code: a.statusCode,
    duration_ms: a.durationMs,
    error: a.error,
    next_retry_at: a.nextRetryAt,
  });
  await trx('webhook_deliveries')
    .where({ id: a.deliveryId })
    .update({
      attempts: a.attempt,
      status: a.outcome === 'retry' ? 'pending' : a.outcome,
      next_attempt_at: a.nextRetryAt ?? trx.fn.now(),
      finished_at: a.outcome === 'retry' ? null : trx.fn.now(),
    });
}
