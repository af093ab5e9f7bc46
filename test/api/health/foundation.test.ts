import request from 'supertest';
import { startTestApp, type TestApp } from '../../helpers/app';
import { adminToken, closeOwnerConnection } from '../../helpers/factories';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t.close();
  await closeOwnerConnection();
});

describe('error pipeline', () => {
  it('answers /healthz and /readyz without a token', async () => {
    await request(t.app).get('/healthz').expect(200, { status: 'ok' });
    const r = await request(t.app).get('/readyz').expect(200);
    expect(r.body).toEqual({ status: 'ready', database: 'ok', rate_limit_store: 'memory' });
  });

  it('401 without a token, with WWW-Authenticate', async () => {
    const r = await request(t.app).get('/api/setup/status').expect(401);
    expect(r.headers['www-authenticate']).toMatch(/^Bearer/);
    expect(r.body).toMatchObject({ error: 'Unauthorized' });
    expect(typeof r.body.request_id).toBe('string');
  });

  it('404 for an unknown path, 405 for a wrong method', async () => {
    const r = await request(t.app).get('/nope').expect(404);
    expect(r.body.error).toBe('Not found');
    const m = await request(t.app).patch('/api/setup/tenants').set('Authorization', `Bearer ${adminToken()}`).expect(405);
    expect(m.body.error).toBe('Method not allowed');
  });

  it('400 for malformed JSON, 415 for another content type, 413 over 1 MiB', async () => {
    const auth = `Bearer ${adminToken()}`;
    const bad = await request(t.app).post('/api/boards').set('Authorization', auth).set('Content-Type', 'application/json').send('{"name":');
    expect(bad.status).toBe(400);
    expect(bad.body.error).toBe('Bad request');
    const text = await request(t.app).post('/api/boards').set('Authorization', auth).set('Content-Type', 'text/plain').send('name=x');
    expect(text.status).toBe(415);
    expect(text.body.error).toBe('Unsupported media type');
    const big = await request(t.app)
      .post('/api/boards')
      .set('Authorization', auth)
      .set('Content-Type', 'application/json')
      .send(JSON.stringify({ name: 'x', description: 'y'.repeat(1024 * 1024 + 10) }));
    expect(big.status).toBe(413);
    expect(big.body.error).toBe('Payload too large');
  });

  it('400 Invalid X-Tenant header format on any endpoint, echoing the value', async () => {
    const r = await request(t.app).get('/healthz').set('X-Tenant', 'Acme_Corp').expect(400);
    expect(r.body).toMatchObject({ error: 'Invalid X-Tenant header format', provided_tenant: 'Acme_Corp' });
  });

  it('400 Validation error naming the field', async () => {
    const r = await request(t.app)
      .get('/api/setup/tenant/not-a-uuid')
      .set('Authorization', `Bearer ${adminToken()}`)
      .expect(400);
    expect(r.body.error).toBe('Validation error');
    expect(r.body.detail).toMatch(/tenant_id/);
  });
});
