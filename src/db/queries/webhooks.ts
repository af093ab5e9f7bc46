/**
 * SQL of webhook endpoints, the delivery outbox and its attempts. Endpoints are platform-level
 * rows (no tenant, no row-level security), managed by platform admins only.
 */
import type { Knex } from 'knex';
import type { WebhookAttempt, WebhookDelivery, WebhookEndpoint } from '../../context/records';

/** Inserts an endpoint with its id chosen by the caller (an encrypted secret is bound to it). `secret` is stored as given. */
export async function insertWebhookEndpoint(
  trx: Knex.Transaction,
  e: { id: string; url: string; description: string | null; eventTypes: string[]; enabled: boolean; secret: string },
): Promise<WebhookEndpoint> {
  const [row] = (await trx('webhook_endpoints')
    .insert({ id: e.id, url: e.url, description: e.description, event_types: e.eventTypes, enabled: e.enabled, secret: e.secret })
    .returning('*')) as WebhookEndpoint[];
  return row!;
}

/** How an encrypted secret starts (src/domain/key-encryption.ts); a plain one starts with `whsec_`. */
const SEALED = 'enc1.%';

/** True when an endpoint's secret is stored encrypted. */
export async function hasSealedWebhookSecrets(trx: Knex.Transaction): Promise<boolean> {
  return (await trx('webhook_endpoints').where('secret', 'like', SEALED).first('id')) !== undefined;
}

/** Endpoints whose secret is stored in plain text (`whsec_…`), locked until `trx` ends. */
export async function selectPlainWebhookSecrets(trx: Knex.Transaction): Promise<Array<{ id: string; secret: string }>> {
  return (await trx('webhook_endpoints').whereNot('secret', 'like', SEALED).select('id', 'secret').forNoKeyUpdate()) as Array<{ id: string; secret: string }>;
}

/** Replaces an endpoint's stored secret (its encrypted form); `updated_at` is left alone: the endpoint did not change. */
export async function updateWebhookSecret(trx: Knex.Transaction, id: string, stored: string): Promise<void> {
  await trx('webhook_endpoints').where({ id }).update({ secret: stored });
}

/** Every endpoint, oldest first (there are few: they are configured by hand). */
export async function selectWebhookEndpoints(db: Knex | Knex.Transaction): Promise<WebhookEndpoint[]> {
  return (await db('webhook_endpoints').select('*').orderBy([{ column: 'created_at' }, { column: 'id' }]).limit(1000)) as WebhookEndpoint[];
}

/**
 * One endpoint; with `forUpdate`, locked against other admins' changes to it (FOR NO KEY UPDATE:
 * no writer of events ever locks an endpoint row, see migration 007).
 */
export async function selectWebhookEndpoint(db: Knex | Knex.Transaction, id: string, forUpdate = false): Promise<WebhookEndpoint | undefined> {
  const q = db('webhook_endpoints').where({ id }).first();
  if (forUpdate) q.forNoKeyUpdate();
  return (await q) as WebhookEndpoint | undefined;
}

export async function updateWebhookEndpoint(
  trx: Knex.Transaction,
  id: string,
  changes: Partial<Pick<WebhookEndpoint, 'url' | 'description' | 'event_types' | 'enabled'>>,
): Promise<WebhookEndpoint> {
  const [row] = (await trx('webhook_endpoints')
    .where({ id })
    .update({ ...changes, updated_at: trx.fn.now() })
    .returning('*')) as WebhookEndpoint[];
  return row!;
}

/**
 * Deletes the endpoint row only: its deliveries are never sent again (claims join the endpoint)
 * and are removed afterwards by deleteOrphanDeliveries, in batches outside this transaction.
 */
export async function deleteWebhookEndpoint(trx: Knex.Transaction, id: string): Promise<number> {
  return trx('webhook_endpoints').where({ id }).delete();
}

/**
 * Deletes up to `batch` deliveries (with their attempts) of `webhookId` if that endpoint no
 * longer exists. Rows a worker holds are skipped, never waited for; they go in a later batch.
 * Returns how many were deleted.
 */
export async function deleteOrphanDeliveries(db: Knex | Knex.Transaction, webhookId: string, batch: number): Promise<number> {
  const r = await db.raw<{ rowCount: number }>(
    `delete from webhook_deliveries where id = any(array(
       select d.id from webhook_deliveries d
        where d.webhook_id = ? and not exists (select 1 from webhook_endpoints w where w.id = ?)
        limit ? for update skip locked))`,
    [webhookId, webhookId, batch],
  );
  return r.rowCount;
}

/**
 * Ids of deleted endpoints that still have deliveries (a delete's cleanup was cut short, or an
 * event written while the endpoint was being deleted). One index probe per distinct endpoint.
 */
export async function selectOrphanWebhookIds(db: Knex | Knex.Transaction): Promise<string[]> {
  const r = await db.raw<{ rows: Array<{ webhook_id: string }> }>(
    `with recursive ids as (
       (select webhook_id from webhook_deliveries order by webhook_id limit 1)
       union all
       select (select d.webhook_id from webhook_deliveries d where d.webhook_id > ids.webhook_id order by d.webhook_id limit 1)
         from ids where ids.webhook_id is not null
     )
     select webhook_id from ids
      where webhook_id is not null and not exists (select 1 from webhook_endpoints w where w.id = ids.webhook_id)`,
  );
  return r.rows.map((x) => x.webhook_id);
}

/** One page of an endpoint's deliveries, newest first, each row with `cursor_ts`. */
export async function selectDeliveries(
  db: Knex | Knex.Transaction,
  webhookId: string,
  opts: { limit: number; after?: { createdAt: string; id: string } },
): Promise<Array<WebhookDelivery & { cursor_ts: string }>> {
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
  return (await q) as Array<WebhookDelivery & { cursor_ts: string }>;
}

export async function selectAttempts(db: Knex | Knex.Transaction, deliveryIds: readonly string[]): Promise<WebhookAttempt[]> {
  if (deliveryIds.length === 0) return [];
  return (await db('webhook_delivery_attempts')
    .whereIn('delivery_id', deliveryIds)
    .orderBy([{ column: 'delivery_id' }, { column: 'attempt' }])) as WebhookAttempt[];
}

/** A due delivery claimed by the worker: locked until `trx` ends, skipped by every other worker. */
export interface ClaimedDelivery {
  id: string;
  webhook_id: string;
  event_id: string;
  attempts: number;
  payload: unknown;
  url: string;
  secret: string;
}

// Advisory lock class of the per-endpoint in-flight slots: (CLASS + slot, hashtext(webhook id)).
const ENDPOINT_SLOT_LOCK_CLASS = 0x57_48_00_00;

/**
 * Claims the most overdue delivery of an enabled endpoint that has a free in-flight slot, or
 * returns null. Per endpoint, at most `perEndpoint` deliveries are in flight across every
 * instance sharing the database: a slot is a transaction-level advisory lock on (slot, endpoint),
 * held with the delivery's row lock (FOR UPDATE SKIP LOCKED) until `trx` ends, so both go the
 * moment an instance's connection drops. `skip` lists endpoints this instance already keeps busy.
 */
export async function claimDueDelivery(trx: Knex.Transaction, opts: { perEndpoint: number; skip: readonly string[] }): Promise<ClaimedDelivery | null> {
  // Endpoints with a due delivery, most overdue first: one index probe each (there are few).
  const candidates = await trx.raw<{ rows: Array<{ id: string; url: string; secret: string }> }>(
    `select w.id, w.url, w.secret
       from webhook_endpoints w
       cross join lateral (
         select d.next_attempt_at from webhook_deliveries d
          where d.webhook_id = w.id and d.status = 'pending'
          order by d.next_attempt_at, d.id limit 1) n
      where w.enabled and n.next_attempt_at <= now() and not (w.id = any(string_to_array(?, ',')::uuid[]))
      order by n.next_attempt_at, w.id
      limit 20`,
    [opts.skip.join(',')],
  );
  for (const w of candidates.rows) {
    for (let slot = 0; slot < opts.perEndpoint; slot++) {
      const lock = await trx.raw<{ rows: Array<{ ok: boolean }> }>('select pg_try_advisory_xact_lock(?::int, hashtext(?::text)) as ok', [ENDPOINT_SLOT_LOCK_CLASS + slot, w.id]);
      if (!lock.rows[0]!.ok) continue;
      const d = await trx.raw<{ rows: Array<Pick<ClaimedDelivery, 'id' | 'event_id' | 'attempts' | 'payload'>> }>(
        `select d.id, d.event_id, d.attempts, d.payload from webhook_deliveries d
          where d.webhook_id = ? and d.status = 'pending' and d.next_attempt_at <= now()
          order by d.next_attempt_at, d.id
          limit 1
          for update skip locked`,
        [w.id],
      );
      const row = d.rows[0];
      if (row) return { ...row, webhook_id: w.id, url: w.url, secret: w.secret };
      break; // nothing claimable here after all (taken meanwhile): try the next endpoint
    }
  }
  return null;
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
