/**
 * What the event log keeps and how much of it one read returns (docs/event-data.md):
 * - tenant `settings` and registration `metadata` keep only SERVICE_EVENT_SETTINGS_KEYS' values;
 *   every other key shows `[redacted] sha256:…`, in the stored event, the API and the webhook
 *   payload alike (45-odd secret-looking keys, nested ones and a database URL with a password);
 * - a 1 MiB registration metadata yields an event whose data is at most 16 KiB;
 * - a tenant admin sees a platform admin's change with the actor `{platform_admin: true}` only;
 * - with 1 000 maximal events (and a few huge ones stored before the bound), every page of both
 *   event lists stays within its byte bound (≤ 4 MiB), and following next_cursor returns every
 *   event exactly once.
 */
import crypto from 'node:crypto';
import request from 'supertest';
import { LOCAL_ISSUER } from '../../../src/auth/local-keys';
import { MAX_EVENT_PAGE_BYTES } from '../../../src/domain/events';
import { startTestApp, type TestApp } from '../../helpers/app';
import { adminToken, closeOwnerConnection, ownerConnection, tenantWithMember, tokenFor, unique } from '../../helpers/factories';
import { SECRET_LOOKING_KEYS, secretSettings } from '../../helpers/secret-settings';

jest.setTimeout(180_000);

const MAX_DATA = 16 * 1024;
/** docs/event-data.md#pages-bounded-in-bytes: a page is at most 4 MiB; the service's own bound may be lower. */
const MAX_PAGE = Math.min(MAX_EVENT_PAGE_BYTES, 4 * 1024 * 1024);
const REDACTED = /^\[redacted\] sha256:[0-9a-f]{64}$/;

let t: TestApp;
const adminSub = unique('events-data-admin');
const admin = `Bearer ${adminToken(adminSub)}`;

beforeAll(async () => {
  t = await startTestApp({
    SERVICE_MULTI_TENANT_MODE: 'true',
    SERVICE_EVENT_SETTINGS_KEYS: 'admin_email,billing_plan,features,theme',
    // The receiver address below is loopback: allowed for this test's endpoint.
    SERVICE_WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
  });
});
afterAll(async () => {
  await t.close();
  await closeOwnerConnection();
});

interface StoredEvent {
  id: string;
  action: string;
  data: Record<string, unknown>;
}

async function eventsOf(res: request.Response): Promise<StoredEvent[]> {
  const requestId = res.headers['x-request-id'] as string;
  return (await ownerConnection()('events').where({ request_id: requestId }).orderBy('occurred_at')) as StoredEvent[];
}

/** Every string leaf of `v`. */
function leaves(v: unknown): string[] {
  if (typeof v === 'string') return [v];
  if (v && typeof v === 'object') return Object.values(v).flatMap(leaves);
  return [];
}

describe('secrets never reach the log or a webhook', () => {
  it('tenant settings and registration metadata keep only allow-listed values, everywhere', async () => {
    const hook = await request(t.app).post('/api/setup/webhooks').set('Authorization', admin).send({ url: 'http://127.0.0.1:9/secrets', events: ['tenant.*'] });
    expect(hook.status).toBe(201);
    try {
      const first = secretSettings();
      const second = secretSettings();
      const slug = unique('secrets');
      const created = await request(t.app)
        .post('/api/setup/tenant')
        .set('Authorization', admin)
        .send({ name: 'Secrets', slug, settings: { ...first, theme: 'dark', billing_plan: 'pro', features: ['sso'] } });
      expect(created.status).toBe(201);
      const updated = await request(t.app)
        .put(`/api/setup/tenant/${created.body.tenant_id}`)
        .set('Authorization', admin)
        .send({ settings: { ...second, theme: 'light', billing_plan: 'pro', features: ['sso'] } });
      expect(updated.status).toBe(200);
      const sub = unique('founder');
      const email = `${sub}@acme-corp.test`;
      const registered = await request(t.app)
        .post('/api/tenants/register')
        .set('Authorization', `Bearer ${tokenFor({ sub, email })}`)
        .send({ organization_name: 'Secret Co', admin_email: email, include_sample_data: false, metadata: { ...first, billing_plan: 'trial', source: 'ads' } });
      expect(registered.status).toBe(201);

      const events = [...(await eventsOf(created)), ...(await eventsOf(updated)), ...(await eventsOf(registered))];
      expect(events.map((e) => e.action)).toEqual(['tenant.created', 'tenant.updated', 'tenant.registered']);
      const payloads = (await ownerConnection()('webhook_deliveries')
        .where({ webhook_id: hook.body.webhook_id })
        .whereIn('event_id', events.map((e) => e.id))
        .select('payload')) as Array<{ payload: unknown }>;
      expect(payloads).toHaveLength(3);
      const listed = await request(t.app).get(`/api/setup/events?tenant_id=${created.body.tenant_id}`).set('Authorization', admin).expect(200);

      const secrets = [...leaves(first), ...leaves(second)];
      for (const text of [JSON.stringify(events), JSON.stringify(payloads), listed.text]) {
        for (const v of secrets) expect(text).not.toContain(v);
        expect(text).not.toContain(':pw-');
      }

      const [ev1, ev2, ev3] = events as [StoredEvent, StoredEvent, StoredEvent];
      const createdSettings = (ev1.data.tenant as { settings: Record<string, unknown> }).settings;
      expect(createdSettings).toMatchObject({ theme: 'dark', billing_plan: 'pro', features: ['sso'] });
      for (const k of SECRET_LOOKING_KEYS) expect(createdSettings[k]).toMatch(REDACTED);
      // The update shows that each secret changed (its hash did) and what the allowed key became.
      const before = (ev2.data.before as { settings: Record<string, unknown> }).settings;
      const after = (ev2.data.after as { settings: Record<string, unknown> }).settings;
      expect([before.theme, after.theme]).toEqual(['dark', 'light']);
      for (const k of SECRET_LOOKING_KEYS) {
        expect(after[k]).toMatch(REDACTED);
        expect(after[k]).not.toBe(before[k]);
      }
      const registration = ev3.data.registration as { metadata: Record<string, unknown>; admin_email: string };
      expect(registration.admin_email).toBe(email);
      expect(registration.metadata.billing_plan).toBe('trial');
      expect(registration.metadata.source).toMatch(REDACTED);
      for (const k of SECRET_LOOKING_KEYS) expect(registration.metadata[k]).toMatch(REDACTED);
      // What the API shows and what a receiver gets are the stored event.
      const payloadOfUpdate = payloads.map((p) => p.payload as { data: { event_id: string; data: unknown } }).find((p) => p.data.event_id === ev2.id)!;
      expect(payloadOfUpdate.data.data).toEqual(ev2.data);
    } finally {
      await request(t.app).delete(`/api/setup/webhooks/${hook.body.webhook_id}`).set('Authorization', admin).expect(204);
    }
  });

  it('a registration with 1 MiB of metadata records at most 16 KiB', async () => {
    const sub = unique('big-founder');
    const email = `${sub}@acme-corp.test`;
    const metadata = { notes: 'n'.repeat(640 * 1024), features: ['f'.repeat(380 * 1024)], billing_plan: 'pro' };
    const res = await request(t.app)
      .post('/api/tenants/register')
      .set('Authorization', `Bearer ${tokenFor({ sub, email })}`)
      .send({ organization_name: 'Big Metadata Co', admin_email: email, include_sample_data: false, metadata });
    expect(res.status).toBe(201);
    const [ev] = await eventsOf(res);
    expect(ev!.action).toBe('tenant.registered');
    expect(Buffer.byteLength(JSON.stringify(ev!.data))).toBeLessThanOrEqual(MAX_DATA);
    const stored = (await ownerConnection().raw<{ rows: Array<{ n: number }> }>('select octet_length(data::text) as n from events where id = ?', [ev!.id])).rows[0]!;
    expect(stored.n).toBeLessThan(2 * MAX_DATA);
    const m = (ev!.data.registration as { metadata: Record<string, unknown> }).metadata;
    expect(m.notes).toMatch(REDACTED);
    expect(m.features).toEqual([{ truncated: true, bytes: 380 * 1024 + 2 }]);
    expect(m.billing_plan).toBe('pro');
    expect(ev!.data.tenant).toMatchObject({ tenant_id: res.body.tenant_id, slug: res.body.organization_slug ?? expect.any(String) });
  });
});

describe("a platform admin's identity stays hidden from tenant admins", () => {
  it('GET /api/tenant/events shows {platform_admin: true} only; the platform view keeps the actor', async () => {
    const operatorSub = unique('operator');
    const operator = `Bearer ${tokenFor({ sub: operatorSub, admin: true, email: 'operator@platform.test' })}`;
    const { tenant, token } = await tenantWithMember('admin');
    const headers = { Authorization: `Bearer ${token}`, 'X-Tenant': tenant.slug };
    await request(t.app).put(`/api/setup/tenant/${tenant.id}`).set('Authorization', operator).send({ name: 'Renamed by the operator' }).expect(200);
    await request(t.app).post('/api/boards').set(headers).send({ name: 'by the tenant admin' }).expect(201);

    const seen = await request(t.app).get('/api/tenant/events').set(headers).expect(200);
    const byOperator = seen.body.events.find((e: { action: string }) => e.action === 'tenant.updated');
    expect(byOperator.actor).toEqual({ platform_admin: true });
    expect(byOperator.ip).toBeNull();
    expect(seen.text).not.toContain(operatorSub);
    expect(seen.text).not.toContain('operator@platform.test');
    const own = seen.body.events.find((e: { action: string }) => e.action === 'board.created');
    expect(own.actor).toMatchObject({ issuer: LOCAL_ISSUER, platform_admin: false });
    // The actor filter cannot confirm who the operator is either.
    const probed = await request(t.app).get(`/api/tenant/events?actor_subject=${operatorSub}`).set(headers).expect(200);
    expect(probed.body.events).toEqual([]);

    const platform = await request(t.app).get(`/api/setup/events?tenant_id=${tenant.id}&action=tenant.updated`).set('Authorization', admin).expect(200);
    expect(platform.body.events[0].actor).toEqual({ issuer: LOCAL_ISSUER, subject: operatorSub, email: 'operator@platform.test', platform_admin: true });
    expect(platform.body.events[0].ip).toMatch(/127\.0\.0\.1|::1/);
  });
});

describe('events pages are bounded in bytes', () => {
  const COUNT = 1000;
  const HUGE = 3;
  let tenantId: string;
  let headers: Record<string, string>;
  const ids = new Set<string>();

  beforeAll(async () => {
    const fixture = await tenantWithMember('admin');
    tenantId = fixture.tenant.id;
    headers = { Authorization: `Bearer ${fixture.token}`, 'X-Tenant': fixture.tenant.slug };
    const owner = ownerConnection();
    // Maximal events: 16 KiB of data each ({"blob":"…"} is 16 384 bytes), long actor fields with
    // characters JSON escapes (quotes, control characters) and multibyte ones; many share a
    // timestamp, so the cursor's id order is exercised too.
    const rows = await owner.raw<{ rows: Array<{ id: string }> }>(
      `insert into events (id, occurred_at, action, tenant_id, actor_issuer, actor_subject, actor_email, actor_platform_admin,
                           target_type, target_id, request_id, ip, data)
       select gen_random_uuid(), now() - (g % 97) * interval '1 millisecond', 'board.created', ?,
              repeat('i', 1000), repeat('"s', 300), repeat(chr(1), 200), g % 2 = 0,
              'board', repeat('é', 100), repeat('r', 200), '255.255.255.255',
              jsonb_build_object('blob', repeat('x', ${MAX_DATA - 11}))
         from generate_series(1, ?) g
       returning id`,
      [tenantId, COUNT],
    );
    for (const r of rows.rows) ids.add(r.id);
    // Written before the bound existed: 1 MiB each, cut by the read.
    for (let i = 0; i < HUGE; i++) {
      const id = crypto.randomUUID();
      await owner('events').insert({ id, occurred_at: new Date(Date.now() - i * 7), action: 'tenant.registered', tenant_id: tenantId, target_type: 'tenant', data: { registration: { metadata: { blob: 'm'.repeat(1024 * 1024) } } } });
      ids.add(id);
    }
  });

  async function readAll(path: string, set: Record<string, string>): Promise<{ seen: string[]; pages: number; sizes: number[]; huge: unknown[] }> {
    const seen: string[] = [];
    const sizes: number[] = [];
    const huge: unknown[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const url: string = `${path}${path.includes('?') ? '&' : '?'}limit=1000${cursor ? `&cursor=${cursor}` : ''}`;
      const r = await request(t.app).get(url).set(set);
      expect(r.status).toBe(200);
      sizes.push(Buffer.byteLength(r.text, 'utf8'));
      for (const e of r.body.events as Array<{ event_id: string; action: string; data: unknown }>) {
        seen.push(e.event_id);
        expect(Buffer.byteLength(JSON.stringify(e.data))).toBeLessThanOrEqual(MAX_DATA);
        if (e.action === 'tenant.registered') huge.push(e.data);
      }
      cursor = r.body.next_cursor;
      pages++;
      // A guard against a cursor that never ends: twice the pages 1 003 maximal events would fill.
      expect(pages).toBeLessThanOrEqual(2 * Math.ceil((1003 * (MAX_DATA + 1024)) / MAX_PAGE));
    } while (cursor);
    return { seen, pages, sizes, huge };
  }

  it('events of every size, any limit: newest first, each once, within the bound', async () => {
    const fixture = await tenantWithMember('admin');
    // Sizes from a few bytes to the 16 KiB maximum, so pages end on the limit or on the bytes,
    // and are read in one statement or several.
    await ownerConnection().raw(
      `insert into events (id, occurred_at, action, tenant_id, target_type, data)
       select gen_random_uuid(), now() - (g % 211) * interval '1 millisecond', 'board.created', ?, 'board',
              jsonb_build_object('blob', repeat('y', case when g % 5 = 0 then ${MAX_DATA - 11} else (g * 7919) % 3000 end))
         from generate_series(1, 1500) g`,
      [fixture.tenant.id],
    );
    for (const limit of [1000, 333, 7]) {
      const seen: Array<{ event_id: string; occurred_at: string }> = [];
      let cursor: string | null = null;
      let pages = 0;
      do {
        const url: string = `/api/setup/events?tenant_id=${fixture.tenant.id}&limit=${limit}${cursor ? `&cursor=${cursor}` : ''}`;
        const r = await request(t.app).get(url).set('Authorization', admin).expect(200);
        expect(Buffer.byteLength(r.text, 'utf8')).toBeLessThanOrEqual(MAX_PAGE);
        expect(r.body.events.length).toBeLessThanOrEqual(limit);
        expect(r.body.events.length).toBeGreaterThan(0);
        seen.push(...r.body.events);
        cursor = r.body.next_cursor;
        expect(++pages).toBeLessThan(400);
      } while (cursor);
      expect(seen).toHaveLength(1500);
      expect(new Set(seen.map((e) => e.event_id)).size).toBe(1500);
      for (let i = 1; i < seen.length; i++) {
        const [a, b] = [seen[i - 1]!, seen[i]!];
        expect(a.occurred_at > b.occurred_at || (a.occurred_at === b.occurred_at && a.event_id > b.event_id)).toBe(true);
      }
    }
  });

  it.each([
    ['GET /api/setup/events', () => ({ path: `/api/setup/events?tenant_id=${tenantId}`, set: { Authorization: admin } })],
    ['GET /api/tenant/events', () => ({ path: '/api/tenant/events?action=board.created', set: headers })],
  ])('%s: no page over the byte bound, every event exactly once', async (_name, which) => {
    const { path, set } = which();
    const { seen, pages, sizes, huge } = await readAll(path, set);
    for (const size of sizes) expect(size).toBeLessThanOrEqual(MAX_PAGE);
    expect(pages).toBeGreaterThan(1);
    expect(new Set(seen).size).toBe(seen.length);
    const expected = path.includes('board.created') ? COUNT : COUNT + HUGE;
    expect(seen).toHaveLength(expected);
    for (const id of seen) expect(ids.has(id)).toBe(true);
    if (!path.includes('board.created')) {
      expect(huge).toHaveLength(HUGE);
      for (const d of huge) expect(d).toEqual({ truncated: true, bytes: expect.any(Number) });
    }
  });
});
