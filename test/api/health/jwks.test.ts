/**
 * getJwks (GET /.well-known/jwks.json): public, cacheable, public halves only; it publishes the
 * local provider's key and the tenant-token keys, so a product verifies both kinds of token with
 * one key set. Rotation and verification with jose: test/api/tenant/tenant-tokens.test.ts.
 */
import request from 'supertest';
import { startTestApp, type TestApp } from '../../helpers/app';
import { closeOwnerConnection } from '../../helpers/factories';

let t: TestApp;

beforeAll(async () => {
  t = await startTestApp({ SERVICE_MULTI_TENANT_MODE: 'true' });
});
afterAll(async () => {
  await t.close();
  await closeOwnerConnection();
});

describe('getJwks', () => {
  it('answers without a token, cacheable, with unique kids and only public key parts', async () => {
    const r = await request(t.app).get('/.well-known/jwks.json').expect(200);
    expect(r.headers['content-type']).toMatch(/^application\/(jwk-set\+)?json/);
    expect(r.headers['cache-control']).toMatch(/max-age=\d+/);
    const keys = r.body.keys as Array<Record<string, unknown>>;
    expect(keys.length).toBeGreaterThanOrEqual(2);
    expect(new Set(keys.map((k) => k.kid)).size).toBe(keys.length);
    for (const k of keys) {
      expect(k).toEqual(expect.objectContaining({ kid: expect.any(String), kty: expect.any(String) }));
      for (const secret of ['d', 'p', 'q', 'dp', 'dq', 'qi', 'k']) expect({ kid: k.kid, [secret]: k[secret] }).toEqual({ kid: k.kid });
    }
  });

  it('a token in the request changes nothing: the same key set for anyone', async () => {
    const anonymous = await request(t.app).get('/.well-known/jwks.json').expect(200);
    const withJunk = await request(t.app).get('/.well-known/jwks.json').set('Authorization', 'Bearer not-a-token').set('X-Tenant', 'whatever').expect(200);
    expect(withJunk.body).toEqual(anonymous.body);
  });
});
