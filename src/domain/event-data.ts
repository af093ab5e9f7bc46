/**
 * What an event's `data` may hold (docs/event-data.md). The log is append-only
 * and its rows go to webhook receivers, so:
 * - free-form objects (tenant `settings`, registration `metadata`) keep the values of the
 *   allow-listed top-level keys only (SERVICE_EVENT_SETTINGS_KEYS); every other key keeps its
 *   name and a salted SHA-256 of its value, so a change is visible and no value is kept;
 * - `data` is at most MAX_EVENT_DATA_BYTES of compact JSON: larger values are replaced, largest
 *   first, by a `{"truncated": true, "bytes": n}` marker.
 */
import crypto from 'node:crypto';

/** The largest `data` of an event, as compact UTF-8 JSON. */
export const MAX_EVENT_DATA_BYTES = 16 * 1024;

/** SERVICE_EVENT_SETTINGS_KEYS when unset. */
export const DEFAULT_EVENT_SETTINGS_KEYS: readonly string[] = ['admin_email', 'billing_plan', 'features'];

/** A value of a key outside the allow-list starts with this, followed by 64 hex digits. */
export const REDACTED_PREFIX = '[redacted] sha256:';

/** Deeper nesting than this is cut: nothing the service writes is that deep. */
const MAX_DEPTH = 32;

/** The marker standing for a value that was cut: its size as compact JSON, in bytes. */
export interface TruncatedMarker {
  truncated: true;
  bytes: number;
}

/**
 * A free-form object a caller sent (tenant settings, registration metadata), wrapped so that
 * recording it copies only allow-listed keys. `toJSON` lets `changedFields` compare two of them.
 */
export class FreeForm {
  constructor(readonly value: unknown) {}
  toJSON(): unknown {
    return this.value;
  }
}

/** Marks `value` as free-form event data (see FreeForm). */
export function freeForm(value: unknown): FreeForm {
  return new FreeForm(value);
}

export interface EventDataPolicy {
  /** Top-level keys of free-form objects whose values are copied. */
  readonly settingsKeys: readonly string[];
  /** Salts the hashes of redacted values, so equal values of two tenants do not match. */
  readonly tenantId: string | null;
}

/** Size of `value` as compact UTF-8 JSON. */
export function jsonBytes(value: unknown): number {
  return Buffer.byteLength(JSON.stringify(value) ?? 'null', 'utf8');
}

export function truncatedMarker(bytes: number): TruncatedMarker {
  return { truncated: true, bytes };
}

/** JSON with object keys sorted at every level, so key order never looks like a change. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map((v) => canonicalJson(v ?? null)).join(',')}]`;
  if (value instanceof Date) return JSON.stringify(value.toISOString());
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/**
 * `"[redacted] sha256:<hex>"`: SHA-256 of `<tenant_id>\n<key>\n<canonical JSON of the value>`.
 * The salt stops a precomputed table from reversing a common password; the hash still changes
 * whenever the value does.
 */
export function redactedValue(tenantId: string | null, key: string, value: unknown): string {
  const hash = crypto.createHash('sha256').update(`${tenantId ?? ''}\n${key}\n${canonicalJson(value)}`, 'utf8').digest('hex');
  return `${REDACTED_PREFIX}${hash}`;
}

/** The allow-listed copy of a free-form object (anything but an object is redacted whole). */
function shapeFreeForm(value: unknown, policy: EventDataPolicy, allowed: ReadonlySet<string>, depth: number): unknown {
  if (value === null || value === undefined) return null;
  if (typeof value !== 'object' || Array.isArray(value)) return redactedValue(policy.tenantId, '', value);
  const out = Object.create(null) as Record<string, unknown>;
  let redactedBytes = 0;
  for (const k in value) {
    if (!Object.prototype.hasOwnProperty.call(value, k)) continue;
    const v = (value as Record<string, unknown>)[k];
    if (v === undefined) continue;
    if (allowed.has(k)) {
      // An allowed key's value is copied whole (nested keys included); the size bound cuts it.
      out[k] = plainData(v, policy, allowed, depth + 1);
      continue;
    }
    const shown = redactedValue(policy.tenantId, k, v);
    out[k] = shown;
    redactedBytes += jsonBytes(k) + shown.length + 4;
    // Hundreds of redacted keys cannot fit anyway: stop hashing, one marker stands for them all.
    if (redactedBytes > MAX_EVENT_DATA_BYTES) return truncatedMarker(jsonBytes(value));
  }
  return out;
}

/** JSON-ready data: dates as ISO text, free-form objects shaped, objects without a prototype. */
function plainData(value: unknown, policy: EventDataPolicy, allowed: ReadonlySet<string>, depth: number): unknown {
  if (value instanceof FreeForm) return shapeFreeForm(value.value, policy, allowed, depth);
  if (value instanceof Date) return value.toISOString();
  if (value === null || typeof value !== 'object') return value;
  if (depth > MAX_DEPTH) return truncatedMarker(jsonBytes(value));
  if (Array.isArray(value)) return value.map((v) => (v === undefined ? null : plainData(v, policy, allowed, depth + 1)));
  // No prototype: a `__proto__` key in a caller's object stays plain data.
  const out = Object.create(null) as Record<string, unknown>;
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    if (v !== undefined) out[k] = plainData(v, policy, allowed, depth + 1);
  }
  return out;
}

/**
 * `value` cut to at most `budget` bytes of compact JSON: the largest members of an object or
 * array are cut first (recursively, so the rest of a large object survives), and what cannot
 * be made to fit becomes the marker. `value` must be plain JSON data.
 */
export function fitJson(value: unknown, budget: number): unknown {
  const bytes = jsonBytes(value);
  return bytes <= budget ? value : shrink(value, bytes, budget);
}

function shrink(value: unknown, bytes: number, budget: number): unknown {
  const marker = truncatedMarker(bytes);
  if (value === null || typeof value !== 'object') return marker;
  const isArray = Array.isArray(value);
  const entries: Array<[string | number, unknown]> = isArray ? (value as unknown[]).map((v, i) => [i, v]) : Object.entries(value as Record<string, unknown>);
  const sizes = entries.map(([, v]) => jsonBytes(v));
  const out: unknown[] | Record<string, unknown> = isArray ? [...(value as unknown[])] : Object.assign(Object.create(null) as Record<string, unknown>, value);
  let total = bytes;
  const order = sizes.map((_, i) => i).sort((a, b) => sizes[b]! - sizes[a]!);
  for (const i of order) {
    if (total <= budget) break;
    const size = sizes[i]!;
    const markerSize = jsonBytes(truncatedMarker(size));
    // Every member left is smaller than a marker: cutting them saves nothing.
    if (size <= markerSize) break;
    const room = budget - (total - size);
    const cut = room >= markerSize ? shrink(entries[i]![1], size, room) : truncatedMarker(size);
    total += jsonBytes(cut) - size;
    (out as Record<string | number, unknown>)[entries[i]![0]] = cut;
  }
  return total <= budget ? out : marker;
}

/**
 * An event's `data` as stored and sent: plain JSON, free-form objects reduced to the
 * allow-list, at most MAX_EVENT_DATA_BYTES.
 */
export function shapeEventData(data: Record<string, unknown>, policy: EventDataPolicy): Record<string, unknown> {
  const allowed = new Set(policy.settingsKeys);
  return fitJson(plainData(data, policy, allowed, 0), MAX_EVENT_DATA_BYTES) as Record<string, unknown>;
}
