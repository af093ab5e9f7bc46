/**
 * GET /metrics (docs/operations.md#metrics-and-logs): scraped after real traffic and parsed with a
 * strict Prometheus text-format parser (test/helpers/prometheus.ts). Checks each metric family the
 * product names, that no label carries a tenant or a user, the token protection, and that it is not
 * rate limited.
 */
import request from 'supertest';
import { startTestApp, type TestApp } from '../../helpers/app';
import { parseExposition, sampleValue, type Family } from '../../helpers/prometheus';
import { closeOwnerConnection, tenantWithMember, tokenFor, unique } from '../../helpers/factories';

const METRICS_TOKEN = 'metrics-token-0123456789abcdef';

let open: TestApp;
let guarded: TestApp;

beforeAll(async () => {
  open = await startTestApp({ SERVICE_MULTI_TENANT_MODE: 'true', SERVICE_RATE_LIMIT_ENABLED: 'true' });
  guarded = await startTestApp({ SERVICE_METRICS_TOKEN: METRICS_TOKEN });
}, 120_000);

afterAll(async () => {
  await open.close();
  await guarded.close();
  await closeOwnerConnection();
});

async function scrape(t: TestApp, headers: Record<string, string> = {}): Promise<Map<string, Family>> {
  const r = await request(t.app).get('/metrics').set(headers);
  expect(r.status).toBe(200);
  expect(r.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4; charset=utf-8$/);
  return parseExposition(r.text);
}

describe('GET /metrics after traffic', () => {
  let families: Map<string, Family>;
  let slug: string;
  let tenantId: string;
  let subject: string;

  beforeAll(async () => {
    const { tenant, user, token } = await tenantWithMember('member');
    slug = tenant.slug;
    tenantId = tenant.id;
    subject = user.subject;
    // Resolved by header: 200.
    expect((await request(open.app).get('/api/tenant').set('Authorization', `Bearer ${token}`).set('X-Tenant', slug)).status).toBe(200);
    // No tenant at all: 400 Missing X-Tenant header.
    const stranger = tokenFor({ sub: unique('nobody') });
    expect((await request(open.app).get('/api/tenant').set('Authorization', `Bearer ${stranger}`)).status).toBe(400);
    // Unknown tenant by header: 404.
    expect((await request(open.app).get('/api/tenant').set('Authorization', `Bearer ${stranger}`).set('X-Tenant', unique('missing'))).status).toBe(404);
    // No token: 401. An unknown path: 404 outside the contract.
    expect((await request(open.app).get('/api/tenant')).status).toBe(401);
    expect((await request(open.app).get('/no-such-path')).status).toBe(404);
    // The register counter (3/hour per caller) refuses the 4th request, valid or not.
    const registrant = tokenFor({ sub: unique('registrant') });
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) {
      statuses.push((await request(open.app).post('/api/tenants/register').set('Authorization', `Bearer ${registrant}`).send({})).status);
    }
    expect(statuses).toEqual([400, 400, 400, 429]);
    families = await scrape(open);
  });

  it('has a request duration histogram by operationId, method and status class', () => {
    const f = families.get('tenant_service_http_request_duration_seconds');
    expect(f?.type).toBe('histogram');
    expect(sampleValue(families, 'tenant_service_http_request_duration_seconds_count', { operation: 'getCurrentTenant', method: 'GET', status_class: '2xx' })).toBeGreaterThanOrEqual(1);
    expect(sampleValue(families, 'tenant_service_http_request_duration_seconds_count', { operation: 'getCurrentTenant', method: 'GET', status_class: '4xx' })).toBeGreaterThanOrEqual(3);
    expect(sampleValue(families, 'tenant_service_http_request_duration_seconds_count', { operation: 'none', method: 'GET', status_class: '4xx' })).toBeGreaterThanOrEqual(1);
    expect(sampleValue(families, 'tenant_service_http_request_duration_seconds_count', { operation: 'registerTenant', method: 'POST', status_class: '4xx' })).toBe(4);
    for (const s of f!.samples) expect(Object.keys(s.labels).sort()).toEqual(s.name.endsWith('_bucket') ? ['le', 'method', 'operation', 'status_class'] : ['method', 'operation', 'status_class']);
  });

  it('counts tenant resolutions by source and outcome', () => {
    expect(families.get('tenant_service_tenant_resolutions_total')?.type).toBe('counter');
    expect(sampleValue(families, 'tenant_service_tenant_resolutions_total', { source: 'header', outcome: 'resolved' })).toBeGreaterThanOrEqual(1);
    expect(sampleValue(families, 'tenant_service_tenant_resolutions_total', { source: 'none', outcome: 'missingTenant' })).toBeGreaterThanOrEqual(1);
    expect(sampleValue(families, 'tenant_service_tenant_resolutions_total', { source: 'header', outcome: 'tenantNotFound' })).toBeGreaterThanOrEqual(1);
  });

  it('counts rate-limit refusals by counter', () => {
    expect(families.get('tenant_service_rate_limit_refusals_total')?.type).toBe('counter');
    expect(sampleValue(families, 'tenant_service_rate_limit_refusals_total', { counter: 'register' })).toBe(1);
  });

  it('reports the database pool and webhook deliveries, and process metrics', () => {
    expect(families.get('tenant_service_db_pool_connections')?.type).toBe('gauge');
    for (const state of ['used', 'free', 'pending_acquire', 'pending_create']) {
      expect(sampleValue(families, 'tenant_service_db_pool_connections', { state })).toBeGreaterThanOrEqual(0);
    }
    expect(sampleValue(families, 'tenant_service_db_pool_max')).toBe(5); // startTestApp's pool
    for (const state of ['working', 'waiting', 'elsewhere']) expect(sampleValue(families, 'tenant_service_sign_in_requests', { state })).toBe(0);
    expect(families.get('tenant_service_webhook_deliveries_total')?.type).toBe('counter');
    for (const outcome of ['delivered', 'retry', 'failed']) {
      expect(sampleValue(families, 'tenant_service_webhook_deliveries_total', { outcome })).toBeGreaterThanOrEqual(0);
    }
    expect(families.get('process_cpu_seconds_total')?.type).toBe('counter');
    expect(families.get('process_resident_memory_bytes')?.type).toBe('gauge');
    expect(families.get('nodejs_heap_size_used_bytes')?.type).toBe('gauge');
  });

  it('names no tenant or user in any label', () => {
    const forbiddenNames = /tenant|slug|user|subject|sub$|email|path|id$/;
    for (const f of families.values()) {
      for (const s of f.samples) {
        for (const [k, v] of Object.entries(s.labels)) {
          expect(forbiddenNames.test(k) ? `${s.name}: label ${k}` : null).toBeNull();
          expect([slug, tenantId, subject].includes(v) ? `${s.name}: label ${k}=${v}` : null).toBeNull();
        }
      }
    }
  });

  it('is not rate limited and carries no rate-limit headers', async () => {
    for (let i = 0; i < 3; i++) {
      const r = await request(open.app).get('/metrics');
      expect(r.status).toBe(200);
      expect(r.headers['x-ratelimit-limit']).toBeUndefined();
    }
  });
});

describe('SERVICE_METRICS_TOKEN', () => {
  it.each([
    ['no Authorization header', {}],
    ['a wrong token', { Authorization: 'Bearer metrics-token-0123456789abcdeX' }],
    ['a prefix of the token', { Authorization: `Bearer ${METRICS_TOKEN.slice(0, -1)}` }],
    ['a user token', { Authorization: `Bearer ${tokenFor({ sub: 'someone', admin: true })}` }],
    ['the token without Bearer', { Authorization: METRICS_TOKEN }],
  ])('%s → 401 with WWW-Authenticate and the Error body', async (_what, headers) => {
    const r = await request(guarded.app).get('/metrics').set(headers as Record<string, string>);
    expect(r.status).toBe(401);
    expect(r.headers['www-authenticate']).toMatch(/^Bearer /);
    expect(r.body).toMatchObject({ error: 'Unauthorized' });
    expect(r.text).not.toContain('tenant_service_');
  });

  it('the right token → 200 and a valid exposition', async () => {
    const families = await scrape(guarded, { Authorization: `Bearer ${METRICS_TOKEN}` });
    expect(families.get('tenant_service_http_request_duration_seconds')?.type).toBe('histogram');
  });

  it('a bad SERVICE_METRICS_TOKEN stops the boot', async () => {
    await expect(startTestApp({ SERVICE_METRICS_TOKEN: 'short' })).rejects.toThrow(/SERVICE_METRICS_TOKEN/);
  });
});

describe('the exposition parser is strict', () => {
  it.each([
    ['no trailing newline', 'a 1'],
    ['a series twice', 'a 1\na 2\n'],
    ['a label twice', 'a{x="1",x="2"} 1\n'],
    ['a bad escape', 'a{x="\\t"} 1\n'],
    ['a non-contiguous family', '# TYPE a gauge\na 1\n# TYPE b gauge\nb 1\na{x="y"} 2\n'],
    ['TYPE after samples', 'a 1\n# TYPE a gauge\n'],
    ['a second HELP', '# HELP a x\n# HELP a y\na 1\n'],
    ['a bad value', 'a one\n'],
    ['a negative counter', '# TYPE a counter\na -1\n'],
    ['a histogram without +Inf', '# TYPE h histogram\nh_bucket{le="1"} 1\nh_sum 1\nh_count 1\n'],
    ['decreasing buckets', '# TYPE h histogram\nh_bucket{le="1"} 2\nh_bucket{le="+Inf"} 1\nh_sum 1\nh_count 1\n'],
    ['+Inf ≠ _count', '# TYPE h histogram\nh_bucket{le="+Inf"} 2\nh_sum 1\nh_count 1\n'],
    ['two keys in one JSON-ish line', '{"a":1} 1\n'],
  ])('rejects %s', (_what, text) => {
    expect(() => parseExposition(text)).toThrow();
  });

  it('accepts a well-formed exposition', () => {
    const f = parseExposition('# HELP h A histogram.\n# TYPE h histogram\nh_bucket{le="0.5",m="a\\"b"} 1\nh_bucket{le="+Inf",m="a\\"b"} 2\nh_sum{m="a\\"b"} 1.5\nh_count{m="a\\"b"} 2\n');
    expect(sampleValue(f, 'h_count', { m: 'a"b' })).toBe(2);
  });
});
