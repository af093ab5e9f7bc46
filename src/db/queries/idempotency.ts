/**
 * The Idempotency-Key store of `POST /api/setup/tenant` (table idempotency_keys, model
 * IdempotencyKeyRow). Keys are claimed inside the create's own transaction: a concurrent
 * request with the same key blocks on the primary key until the first commits or rolls back.
 */
import type { Knex } from 'knex';
import { IdempotencyKeyRow } from '../models';
import type { IdempotencyRecord } from '../../context/records';

/**
 * Forgets the key if it expired (older than `windowHours`), and a few other expired keys with
 * it (at most 100 per call), to keep the table small. The batch is a TID scan.
 */
export async function sweepExpiredIdempotencyKeys(trx: Knex.Transaction, caller: string, key: string, windowHours: number): Promise<void> {
  await trx.raw(
    `delete from idempotency_keys where ctid = any(array(
       select ctid from idempotency_keys
        where (caller = ? and key = ? and created_at < now() - make_interval(hours => ?))
           or created_at < now() - make_interval(hours => ?)
        limit 100))`,
    [caller, key, windowHours, windowHours],
  );
}

/** Claims the key for this request: true when it was free (now held until commit), false when stored. */
export async function claimIdempotencyKey(trx: Knex.Transaction, caller: string, key: string, requestHash: string): Promise<boolean> {
  const claimed = await trx.raw<{ rows: unknown[] }>(
    `insert into idempotency_keys (caller, key, request_hash, response)
     values (?, ?, ?, '{}'::jsonb)
     on conflict (caller, key) do nothing
     returning key`,
    [caller, key, requestHash],
  );
  return claimed.rows.length > 0;
}

/** The stored key (request hash and first response), or undefined when it is gone. */
export async function readIdempotencyKey(trx: Knex.Transaction, caller: string, key: string): Promise<IdempotencyRecord | undefined> {
  const row = await IdempotencyKeyRow.query(trx).findById([caller, key]).select('request_hash', 'response');
  return row && { request_hash: row.request_hash, response: row.response };
}

/** Stores the first response under the claimed key. */
export async function completeIdempotencyKey(
  trx: Knex.Transaction,
  caller: string,
  key: string,
  tenantId: string,
  response: Record<string, unknown>,
): Promise<void> {
  await IdempotencyKeyRow.query(trx).findById([caller, key]).patch({ tenant_id: tenantId, response });
}
