/**
 * src/domain/event-data.ts: free-form objects (tenant settings, registration metadata) keep only
 * allow-listed keys' values in an event; every other key shows a salted SHA-256; `data` is at most
 * 16 KiB of compact JSON, cut with a `{"truncated": true, "bytes": n}` marker.
 */
import crypto from 'node:crypto';
import { SECRET_LOOKING_KEYS, secretSettings } from '../helpers/secret-settings';
import { DEFAULT_EVENT_SETTINGS_KEYS, fitJson, freeForm, jsonBytes, MAX_EVENT_DATA_BYTES, REDACTED_PREFIX, shapeEventData } from '../../src/domain/event-data';

const TENANT = '6f1c1d9e-2f43-4b4e-9d0a-3e8a2b7c5d10';
const policy = { settingsKeys: DEFAULT_EVENT_SETTINGS_KEYS, tenantId: TENANT };

/** Every string leaf of `v`. */
function leaves(v: unknown): string[] {
  if (typeof v === 'string') return [v];
  if (v && typeof v === 'object') return Object.values(v).flatMap(leaves);
  return [];
}

describe('free-form objects: an allow-list, not a list of bad names', () => {
  it('keeps allow-listed values and hides every other value behind a salted SHA-256', () => {
    const secrets = secretSettings();
    const settings = { ...secrets, admin_email: 'ops@acme.test', billing_plan: 'pro', features: ['sso', { beta: { level: 2 } }] };
    const out = shapeEventData({ tenant: { name: 'Acme', settings: freeForm(settings) } }, policy) as { tenant: { name: string; settings: Record<string, string> } };
    const text = JSON.stringify(out);
    for (const v of leaves(secrets)) expect(text).not.toContain(v);
    expect(text).not.toContain('pw-');
    expect(out.tenant.name).toBe('Acme');
    expect(out.tenant.settings).toMatchObject({ admin_email: 'ops@acme.test', billing_plan: 'pro', features: ['sso', { beta: { level: 2 } }] });
    for (const k of SECRET_LOOKING_KEYS) expect(out.tenant.settings[k]).toMatch(/^\[redacted\] sha256:[0-9a-f]{64}$/);
    // The documented recipe: SHA-256 of "<tenant_id>\n<key>\n<canonical JSON>".
    const expected = crypto.createHash('sha256').update(`${TENANT}\nsmtp_pass\n${JSON.stringify(secrets.smtp_pass)}`).digest('hex');
    expect(out.tenant.settings.smtp_pass).toBe(`${REDACTED_PREFIX}${expected}`);
  });

  it('a changed value changes its hash; key order does not; another tenant hashes differently', () => {
    const at = (settings: unknown, tenantId = TENANT) => (shapeEventData({ s: freeForm(settings) }, { ...policy, tenantId }) as { s: Record<string, string> }).s;
    expect(at({ smtp: { host: 'a', port: 1 } }).smtp).toBe(at({ smtp: { port: 1, host: 'a' } }).smtp);
    expect(at({ smtp: { host: 'a', port: 1 } }).smtp).not.toBe(at({ smtp: { host: 'a', port: 2 } }).smtp);
    expect(at({ k: 'same' }).k).not.toBe(at({ k: 'same' }, '00000000-0000-4000-8000-000000000000').k);
  });

  it('the allow-list is the configured one, by exact top-level key', () => {
    const out = shapeEventData({ s: freeForm({ theme: 'dark', Theme: 'x', admin_email: 'a@b.test' }) }, { settingsKeys: ['theme'], tenantId: TENANT }) as { s: Record<string, string> };
    expect(out.s.theme).toBe('dark');
    expect(out.s.Theme).toMatch(/^\[redacted\]/);
    expect(out.s.admin_email).toMatch(/^\[redacted\]/);
    const none = shapeEventData({ s: freeForm({ billing_plan: 'pro' }) }, { settingsKeys: [], tenantId: TENANT }) as { s: Record<string, string> };
    expect(none.s.billing_plan).toMatch(/^\[redacted\]/);
  });

  it('keeps dates as ISO text and a __proto__ key as plain data', () => {
    const out = shapeEventData(JSON.parse('{"name":"Acme","__proto__":{"polluted":true}}') as Record<string, unknown>, policy) as Record<string, unknown>;
    expect(out.name).toBe('Acme');
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(shapeEventData({ at: new Date('2026-01-02T03:04:05Z') }, policy)).toEqual({ at: '2026-01-02T03:04:05.000Z' });
  });
});

describe('at most 16 KiB of data', () => {
  it('cuts the largest values first and keeps the rest', () => {
    const data = { tenant: { name: 'Acme', settings: freeForm({ features: ['x'.repeat(100_000)], billing_plan: 'pro' }) }, slug: 'acme' };
    const out = shapeEventData(data, policy) as { tenant: { name: string; settings: { features: unknown; billing_plan: string } }; slug: string };
    expect(jsonBytes(out)).toBeLessThanOrEqual(MAX_EVENT_DATA_BYTES);
    expect(out.slug).toBe('acme');
    expect(out.tenant.name).toBe('Acme');
    expect(out.tenant.settings.billing_plan).toBe('pro');
    expect(out.tenant.settings.features).toEqual([{ truncated: true, bytes: 100_002 }]);
  });

  it('a free-form object of a hundred thousand keys becomes one marker', () => {
    const many = Object.fromEntries(Array.from({ length: 100_000 }, (_, i) => [`k${i}`, i]));
    const out = shapeEventData({ registration: { metadata: freeForm(many) } }, policy) as { registration: { metadata: unknown } };
    expect(out.registration.metadata).toEqual({ truncated: true, bytes: jsonBytes(many) });
  });

  it('many members each smaller than a marker: the container becomes the marker', () => {
    const tiny = Array.from({ length: 20_000 }, () => 1);
    expect(fitJson({ tiny, name: 'n' }, 1024)).toEqual({ tiny: { truncated: true, bytes: jsonBytes(tiny) }, name: 'n' });
    expect(fitJson(tiny, 1024)).toEqual({ truncated: true, bytes: jsonBytes(tiny) });
  });

  it('every result fits whatever the shape (escapes and multibyte characters counted in bytes)', () => {
    const shapes: unknown[] = [
      { s: '"\u0001é'.repeat(10_000) },
      { a: Array.from({ length: 3000 }, (_, i) => ({ i, t: 'é'.repeat(i % 50) })) },
      { deep: JSON.parse('['.repeat(40) + '"x"' + ']'.repeat(40)) as unknown },
      { k: Object.fromEntries(Array.from({ length: 5000 }, (_, i) => [`key-${i}`, 'v'.repeat(i % 20)])) },
    ];
    for (const shape of shapes) expect(jsonBytes(shapeEventData(shape as Record<string, unknown>, policy))).toBeLessThanOrEqual(MAX_EVENT_DATA_BYTES);
  });
});
