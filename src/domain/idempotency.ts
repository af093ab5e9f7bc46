/**
 * Idempotency-Key for a create (docs/tenants.md#tenant-administration): the first request under a
 * (caller, key) does the work and stores its response; a replay with the same request answers
 * that response, one with another request is 409.
 */
import crypto from 'node:crypto';
import { claimIdempotencyKey, completeIdempotencyKey, readIdempotencyKey, sweepExpiredIdempotencyKeys } from '../db/queries/idempotency';
import type { Transaction } from '../db/tenant-scope';
import { ApiError } from '../errors';

/** How long a stored Idempotency-Key answers replays. */
export const IDEMPOTENCY_WINDOW_HOURS = 24;

export interface IdempotencyInput {
  /** Who sent the key: keys are scoped per caller, so two callers never share one. */
  caller: { issuer: string; subject: string };
  key: string;
}

/** JSON with object keys sorted at every level, so equal bodies hash equally. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/** sha256 of the canonical JSON of a request (object keys sorted, undefined members left out). */
export function requestHash(request: unknown): string {
  return crypto.createHash('sha256').update(canonicalJson(request)).digest('hex');
}

/**
 * The caller as stored in idempotency_keys' primary key: the JSON pair, or its SHA-256 when the
 * pair is long (issuer and subject may each be 1 024 bytes and JSON escaping doubles some
 * characters; an index row holds at most ~2 700 bytes). Short pairs keep their old form.
 */
const callerKey = (c: IdempotencyInput['caller']) => {
  const pair = JSON.stringify([c.issuer, c.subject]);
  return Buffer.byteLength(pair, 'utf8') <= 512 ? pair : `sha256:${crypto.createHash('sha256').update(pair).digest('hex')}`;
};

/** What a keyed piece of work leaves: its result, the response stored for replays, and the tenant it made. */
export interface KeyedOutcome<T, S extends Record<string, unknown>> {
  result: T;
  stored: S;
  tenantId: string;
}

/**
 * Runs `work` inside `trx` under `idempotency` (no key: just runs it). The key row is written
 * first in the same transaction, so a concurrent request with the same key blocks on its primary
 * key until this one commits, then replays its result: one key never does the work twice; if
 * this one rolls back, nothing of it (key included) remains. `hash` is the request's
 * `requestHash`; `replay` turns the stored response back into a result.
 */
export async function withIdempotencyKey<T, S extends Record<string, unknown>>(
  trx: Transaction,
  idempotency: IdempotencyInput | undefined,
  hash: string,
  work: () => Promise<KeyedOutcome<T, S>>,
  replay: (stored: S) => T,
): Promise<T> {
  if (!idempotency) return (await work()).result;
  const caller = callerKey(idempotency.caller);
  // An expired key is forgotten; so are a few other expired ones, to keep the table small.
  await sweepExpiredIdempotencyKeys(trx, caller, idempotency.key, IDEMPOTENCY_WINDOW_HOURS);
  if (!(await claimIdempotencyKey(trx, caller, idempotency.key, hash))) {
    const stored = await readIdempotencyKey(trx, caller, idempotency.key);
    if (!stored) {
      // Only reachable if the row expired and was swept between the two statements.
      throw new ApiError('conflict', `The Idempotency-Key '${idempotency.key}' is being reused; retry the request.`);
    }
    if (stored.request_hash !== hash) {
      throw new ApiError('conflict', `The Idempotency-Key '${idempotency.key}' was already used with a different request body.`);
    }
    return replay(stored.response as unknown as S);
  }
  const outcome = await work();
  await completeIdempotencyKey(trx, caller, idempotency.key, outcome.tenantId, { ...outcome.stored });
  return outcome.result;
}
