/**
 * Routing by openapi-backend's router (src/http/match.ts): a request matches an operation only
 * as written. The router itself reads '//x' as '/x' and does not escape '.' in its templates;
 * the match stage checks the matched template against the path, as the hand-written router it
 * replaced did.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { startTestApp, type TestApp } from '../helpers/app';
import { adminToken, closeOwnerConnection } from '../helpers/factories';

let t: TestApp;
let server: http.Server;
beforeAll(async () => {
  t = await startTestApp();
  server = http.createServer(t.app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
});
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  await t.close();
  await closeOwnerConnection();
});

const auth = () => `Bearer ${adminToken()}`;

/**
 * A request whose path is sent exactly as written. Not through supertest: its contract check
 * matches paths with openapi-backend's router as is, which reads these paths as operations.
 */
async function send(method: string, path: string): Promise<{ status: number; body: { error?: string } }> {
  const res = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}${path}`, { method, headers: { authorization: auth() } });
  return { status: res.status, body: (await res.json()) as { error?: string } };
}

it('matches the operations as written (controls)', async () => {
  await request(t.app).get('/.well-known/jwks.json').expect(200);
  await request(t.app).get('/api/setup/tenants').set('Authorization', auth()).expect(200);
});

it.each([
  ['a doubled leading slash', '//api/setup/tenants'],
  ['a doubled leading slash on a public path', '//healthz'],
  ['a dot of a template that is not there', '/.well-known/jwksXjson'],
  ['another dot', '/Xwell-known/jwks.json'],
  ['a trailing slash', '/api/setup/tenants/'],
  ['another case', '/api/Setup/tenants'],
  ['an extra segment after a parameter', '/api/setup/tenant/0b1a2c3d-0000-4000-8000-000000000000/x/y'],
])('%s is 404: %s', async (_what, path) => {
  expect(await send('GET', path)).toMatchObject({ status: 404, body: { error: 'Not found' } });
});

it('a known templated path with another method is 405', async () => {
  const r = await request(t.app).post('/api/setup/tenant/0b1a2c3d-0000-4000-8000-000000000000').set('Authorization', auth()).expect(405);
  expect(r.body.error).toBe('Method not allowed');
});

it('decodes path parameters, and refuses a malformed escape with 400', async () => {
  // %30 is '0': decoded, the id is a well-formed UUID of no tenant (undecoded it would be a 400).
  const missing = await request(t.app).get('/api/setup/tenant/0b1a2c3d-0000-4000-8000-00000000000%30').set('Authorization', auth()).expect(404);
  expect(missing.body.error).toBe('Tenant not found');
  const bad = await request(t.app).get('/api/setup/tenant/%E0%A4%A').set('Authorization', auth()).expect(400);
  expect(bad.body.error).toBe('Bad request');
});
