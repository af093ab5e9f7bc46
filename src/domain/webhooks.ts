/**
 * Webhook endpoints (docs/events.md#webhooks), managed by platform admins: an http(s) URL, the
 * event types it wants (`tenant.created`, `tenant.*` or `*`), and a `whsec_` signing secret shown
 * once. Deliveries are written by recordEvent (the outbox) and sent by
 * src/workers/webhook-delivery.ts.
 *
 * Server-side request forgery: only platform admins can point the service at a URL; only
 * http and https are accepted, without credentials in the URL; a host on a loopback, private,
 * link-local or otherwise internal network is refused (./webhook-network.ts) unless
 * SERVICE_WEBHOOK_ALLOW_PRIVATE_NETWORKS is set, here and again at each delivery's connect;
 * redirects are never followed; the receiver's answer is reduced to its status code (its body
 * is never stored or shown) and a failure to a category (no socket messages).
 */
import crypto from 'node:crypto';
import {
  deleteOrphanDeliveries,
  deleteWebhookEndpoint,
  insertWebhookEndpoint,
  selectAttempts,
  selectDeliveries,
  selectOrphanWebhookIds,
  selectWebhookEndpoint,
  selectWebhookEndpoints,
  updateWebhookEndpoint,
} from '../db/queries/webhooks';
import { withService, type Database } from '../db/tenant-scope';
import { ApiError } from '../errors';
import { changedFields, EVENT_ACTIONS, recordEvent, type EventOrigin } from './events';
import { sealWebhookSecret } from './key-encryption';
import { decodeCursor, encodeCursor } from './pagination';
import { refusePlainSecretDowngrade } from './secrets-at-rest';
import { forbiddenHostKind } from './webhook-network';
import type { WebhookAttempt, WebhookDelivery, WebhookEndpoint } from '../context/records';

const notFound = (id: string) => new ApiError('notFound', `No webhook endpoint with id ${id}.`);

/** Patterns an endpoint may subscribe to: `*`, `<category>.*`, or an exact action. */
export function validEventPatterns(): Set<string> {
  const patterns = new Set<string>(['*', ...EVENT_ACTIONS]);
  for (const a of EVENT_ACTIONS) patterns.add(`${a.slice(0, a.indexOf('.'))}.*`);
  return patterns;
}

function checkEventTypes(events: readonly string[]): string[] {
  const valid = validEventPatterns();
  const unknown = events.filter((e) => !valid.has(e));
  if (unknown.length) {
    throw new ApiError('validation', `body.events has unknown event types: ${unknown.slice(0, 5).map((e) => `'${e}'`).join(', ')}; use an action such as 'tenant.created', a category such as 'tenant.*', or '*'.`);
  }
  return [...new Set(events)];
}

/** http(s), a host, no user name or password in the URL, no fragment. */
export function checkWebhookUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ApiError('validation', 'body.url must be an absolute http or https URL.');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new ApiError('validation', 'body.url must use http or https.');
  if (url.username || url.password) throw new ApiError('validation', 'body.url must not carry a user name or password; authenticate receivers by the signature.');
  if (!url.hostname) throw new ApiError('validation', 'body.url must name a host.');
  if (url.hash) throw new ApiError('validation', 'body.url must not have a fragment.');
  return url.toString();
}

/** Where a URL may point: SERVICE_WEBHOOK_ALLOW_PRIVATE_NETWORKS. */
export interface WebhookNetworkPolicy {
  readonly allowPrivateNetworks: boolean;
}

/** checkWebhookUrl, then the network rule: a host on a refused network is a 400. */
export async function checkWebhookTarget(raw: string, policy: WebhookNetworkPolicy): Promise<string> {
  const url = checkWebhookUrl(raw);
  if (policy.allowPrivateNetworks) return url;
  const kind = await forbiddenHostKind(new URL(url).hostname);
  if (kind) {
    throw new ApiError(
      'validation',
      `body.url's host is on a ${kind} network; webhooks may reach only public addresses (SERVICE_WEBHOOK_ALLOW_PRIVATE_NETWORKS=true allows private ones, for local development).`,
    );
  }
  return url;
}

/** A new signing secret in the Standard Webhooks format: `whsec_` + base64 of 32 random bytes. */
export function newWebhookSecret(): string {
  return `whsec_${crypto.randomBytes(32).toString('base64')}`;
}

/** An endpoint as the API shows it (never its secret). */
export interface WebhookView {
  webhook_id: string;
  url: string;
  description: string | null;
  events: string[];
  enabled: boolean;
  created_at: string;
  updated_at: string;
}

export function toWebhookView(r: WebhookEndpoint): WebhookView {
  return {
    webhook_id: r.id,
    url: r.url,
    description: r.description,
    events: r.event_types,
    enabled: r.enabled,
    created_at: new Date(r.created_at).toISOString(),
    updated_at: new Date(r.updated_at).toISOString(),
  };
}

/** What an event says about an endpoint (no secret, no timestamps). */
function webhookData(r: WebhookEndpoint): Record<string, unknown> {
  return { webhook_id: r.id, url: r.url, description: r.description, events: r.event_types, enabled: r.enabled };
}

export interface WebhookInput {
  url: string;
  events: string[];
  description?: string | null;
  enabled?: boolean;
}

/**
 * Creates an endpoint; the answer carries its secret, the only time it is shown. With
 * `encryptionSecret` (SERVICE_KEY_ENCRYPTION_SECRET) the stored secret is encrypted; without it
 * the endpoint is refused where the database already holds encrypted secrets.
 */
export async function createWebhook(
  db: Database,
  origin: EventOrigin,
  input: WebhookInput,
  policy: WebhookNetworkPolicy,
  encryptionSecret: string | null,
): Promise<WebhookView & { secret: string }> {
  checkWebhookUrl(input.url);
  const eventTypes = checkEventTypes(input.events);
  const url = await checkWebhookTarget(input.url, policy);
  const secret = newWebhookSecret();
  // The id is chosen here: an encrypted secret is bound to its row.
  const id = crypto.randomUUID();
  return withService(db, async (trx) => {
    await refusePlainSecretDowngrade(trx, encryptionSecret, 'create a webhook endpoint');
    const stored = encryptionSecret === null ? secret : sealWebhookSecret(encryptionSecret, id, secret);
    const row = await insertWebhookEndpoint(trx, { id, url, description: input.description ?? null, eventTypes, enabled: input.enabled ?? true, secret: stored });
    await recordEvent(trx, origin, { action: 'webhook.created', tenantId: null, target: { type: 'webhook', id: row.id }, data: { webhook: webhookData(row) } });
    return { ...toWebhookView(row), secret };
  });
}

export async function listWebhooks(db: Database): Promise<WebhookView[]> {
  return (await withService(db, (trx) => selectWebhookEndpoints(trx), { readOnly: true })).map(toWebhookView);
}

export async function getWebhook(db: Database, id: string): Promise<WebhookView> {
  const row = await withService(db, (trx) => selectWebhookEndpoint(trx, id), { readOnly: true });
  if (!row) throw notFound(id);
  return toWebhookView(row);
}

/** Changes the fields present (`url`, `events`, `description`, `enabled`). */
export async function updateWebhook(db: Database, origin: EventOrigin, id: string, patch: Partial<WebhookInput>, policy: WebhookNetworkPolicy): Promise<WebhookView> {
  const changes: Partial<Pick<WebhookEndpoint, 'url' | 'description' | 'event_types' | 'enabled'>> = {};
  if (patch.url !== undefined) checkWebhookUrl(patch.url);
  if (patch.events !== undefined) changes.event_types = checkEventTypes(patch.events);
  // Resolved before the transaction: a slow DNS answer holds no connection.
  if (patch.url !== undefined) changes.url = await checkWebhookTarget(patch.url, policy);
  if (patch.description !== undefined) changes.description = patch.description;
  if (patch.enabled !== undefined) changes.enabled = patch.enabled;
  return withService(db, async (trx) => {
    const current = await selectWebhookEndpoint(trx, id, true);
    if (!current) throw notFound(id);
    const row = await updateWebhookEndpoint(trx, id, changes);
    const diff = changedFields(webhookData(current), webhookData(row));
    await recordEvent(trx, origin, { action: 'webhook.updated', tenantId: null, target: { type: 'webhook', id }, data: diff });
    return toWebhookView(row);
  });
}

const CLEANUP_BATCH = 500;
const CLEANUP_BATCHES_IN_REQUEST = 10;

/**
 * Deletes an endpoint: its pending deliveries are never sent from the moment this commits. The
 * endpoint row is all this transaction touches (no writer of events waits on it); its deliveries
 * are then removed in batches of their own short transactions, skipping any the worker holds.
 * What a request leaves (a very long backlog, a held row) the delivery worker's sweep removes.
 */
export async function deleteWebhook(db: Database, origin: EventOrigin, id: string): Promise<void> {
  await withService(db, async (trx) => {
    const current = await selectWebhookEndpoint(trx, id, true);
    if (!current) throw notFound(id);
    await deleteWebhookEndpoint(trx, id);
    await recordEvent(trx, origin, { action: 'webhook.deleted', tenantId: null, target: { type: 'webhook', id }, data: { webhook: webhookData(current) } });
  });
  try {
    await removeDeliveriesOfDeleted(db, id, CLEANUP_BATCHES_IN_REQUEST);
  } catch {
    // The endpoint is deleted and nothing more is sent to it; the worker's sweep removes the rest.
  }
}

/** Removes a deleted endpoint's deliveries, `CLEANUP_BATCH` rows per transaction, at most `maxBatches` batches. */
async function removeDeliveriesOfDeleted(db: Database, webhookId: string, maxBatches: number): Promise<number> {
  let removed = 0;
  for (let i = 0; i < maxBatches; i++) {
    const n = await withService(db, (trx) => deleteOrphanDeliveries(trx, webhookId, CLEANUP_BATCH));
    removed += n;
    if (n < CLEANUP_BATCH) break;
  }
  return removed;
}

/**
 * The delivery worker's sweep: removes deliveries left behind by deleted endpoints (a delete's
 * cleanup cut short, a row the worker held then, an event written while the endpoint was being
 * deleted). Returns how many rows it removed.
 */
export async function sweepDeletedEndpointDeliveries(db: Database, maxBatchesPerEndpoint = 20): Promise<number> {
  const ids = await withService(db, (trx) => selectOrphanWebhookIds(trx), { readOnly: true });
  let removed = 0;
  for (const id of ids) removed += await removeDeliveriesOfDeleted(db, id, maxBatchesPerEndpoint);
  return removed;
}

export interface DeliveryView {
  delivery_id: string;
  event_id: string;
  event_type: string;
  tenant_id: string | null;
  status: 'pending' | 'delivered' | 'failed';
  attempt_count: number;
  next_attempt_at: string | null;
  created_at: string;
  finished_at: string | null;
  attempts: Array<{ attempt: number; attempted_at: string; status_code: number | null; duration_ms: number; error: string | null; next_retry_at: string | null }>;
}

const iso = (d: Date | string | null): string | null => (d === null ? null : new Date(d).toISOString());

function toDeliveryView(d: WebhookDelivery, attempts: WebhookAttempt[]): DeliveryView {
  return {
    delivery_id: d.id,
    event_id: d.event_id,
    event_type: d.event_type,
    tenant_id: d.tenant_id,
    status: d.status,
    attempt_count: d.attempts,
    next_attempt_at: d.status === 'pending' ? iso(d.next_attempt_at) : null,
    created_at: iso(d.created_at)!,
    finished_at: iso(d.finished_at),
    attempts: attempts.map((a) => ({
      attempt: a.attempt,
      attempted_at: iso(a.attempted_at)!,
      status_code: a.status_code,
      duration_ms: a.duration_ms,
      error: a.error,
      next_retry_at: iso(a.next_retry_at),
    })),
  };
}

/** One page of an endpoint's deliveries, newest first, each with every attempt. */
export async function listWebhookDeliveries(db: Database, id: string, opts: { limit?: number; cursor?: string }): Promise<{ deliveries: DeliveryView[]; nextCursor: string | null }> {
  const limit = opts.limit ?? 100;
  const after = opts.cursor !== undefined ? decodeCursor(opts.cursor) : undefined;
  return withService(
    db,
    async (trx) => {
      if (!(await selectWebhookEndpoint(trx, id))) throw notFound(id);
      const rows = await selectDeliveries(trx, id, { limit, after });
      const more = rows.length > limit;
      const shown = more ? rows.slice(0, limit) : rows;
      const attempts = await selectAttempts(trx, shown.map((r) => r.id));
      const byDelivery = new Map<string, WebhookAttempt[]>();
      for (const a of attempts) byDelivery.set(a.delivery_id, [...(byDelivery.get(a.delivery_id) ?? []), a]);
      const last = shown[shown.length - 1];
      return {
        deliveries: shown.map((d) => toDeliveryView(d, byDelivery.get(d.id) ?? [])),
        nextCursor: more && last ? encodeCursor({ createdAt: last.cursor_ts, id: last.id }) : null,
      };
    },
    { isolationLevel: 'repeatable read', readOnly: true },
  );
}
