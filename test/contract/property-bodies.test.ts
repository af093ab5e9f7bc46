/**
 * Property-based tests: request bodies generated from openapi.yaml's schemas (any Unicode in
 * free text, free-form settings/metadata with any keys, `__proto__` included) for createTenant,
 * registerTenant, createBoard and updateTenant. Valid bodies are accepted (2xx, or a documented
 * 409); invalid ones are refused with 400; nothing is ever answered with a 5xx; Object.prototype
 * stays clean. Every response is also checked against the contract by the supertest hook.
 */
import fc from 'fast-check';
import request from 'supertest';
import { startTestApp, type TestApp } from '../helpers/app';
import { prototypeKeys } from '../helpers/hostile';
import { invalidBody, schemaOf, validBody } from '../helpers/schema-arbitrary';
import { adminToken, closeOwnerConnection, ownerConnection, tenantWithMember, tokenFor, unique } from '../helpers/factories';

jest.setTimeout(180_000);

let t: TestApp;
const admin = `Bearer ${adminToken()}`;
let member: { token: string; slug: string; tenantId: string };
let updatable: string;
const protoBefore = prototypeKeys();
let n = 0;
const uniq = () => `p${(++n).toString(36)}-${unique('').slice(1)}-`;

beforeAll(async () => {
  t = await startTestApp({ SERVICE_MULTI_TENANT_MODE: 'true' });
  const m = await tenantWithMember('admin');
  member = { token: `Bearer ${m.token}`, slug: m.tenant.slug, tenantId: m.tenant.id };
  const r = await request(t.app).post('/api/setup/tenant').set('Authorization', admin).send({ name: 'Updatable', slug: unique('upd') }).expect(201);
  updatable = r.body.tenant_id;
});

afterAll(async () => {
  await t.close();
  await closeOwnerConnection();
});

afterEach(() => {
  expect(prototypeKeys()).toEqual(protoBefore);
});

const send = (method: 'post' | 'put', path: string, auth: string, body: unknown, tenant?: string) => {
  const req = request(t.app)[method](path).set('Authorization', auth).set('Content-Type', 'application/json');
  if (tenant) req.set('X-Tenant', tenant);
  return req.send(JSON.stringify(body));
};

function describeFailure(body: unknown, r: request.Response): string {
  return `${r.status} ${JSON.stringify(r.body)} for ${JSON.stringify(body)}`;
}

describe('createTenant (POST /api/setup/tenant)', () => {
  it('accepts every valid body (201), never 5xx', async () => {
    await fc.assert(
      fc.asyncProperty(validBody(schemaOf('CreateTenantRequest'), uniq) as fc.Arbitrary<Record<string, unknown>>, async (body) => {
        // Sample data is slow and covered elsewhere; the property is about the body's shape.
        const b: Record<string, unknown> = { ...(body as Record<string, unknown>), include_sample_data: false };
        const r = await send('post', '/api/setup/tenant', admin, b);
        if (r.status !== 201) throw new Error(describeFailure(b, r));
        const stored = await request(t.app).get(`/api/setup/tenant/${r.body.tenant_id}`).set('Authorization', admin).expect(200);
        expect(stored.body.slug).toBe(b.slug);
        expect(stored.body.name).toBe((b.name as string));
        // What was sent is JSON (so -0 arrives as 0): compare with the body as JSON carries it.
        expect(stored.body.settings).toEqual(JSON.parse(JSON.stringify(b.settings ?? {})));
      }),
      { numRuns: 60 },
    );
  });

  it('refuses every invalid body with 400', async () => {
    await fc.assert(
      fc.asyncProperty(invalidBody(schemaOf('CreateTenantRequest'), uniq), async (body) => {
        const r = await send('post', '/api/setup/tenant', admin, body);
        if (r.status !== 400) throw new Error(describeFailure(body, r));
      }),
      { numRuns: 150 },
    );
  });
});

describe('updateTenant (PUT /api/setup/tenant/{id})', () => {
  it('valid bodies answer 200 (or 409 for a taken slug), invalid ones 400, never 5xx', async () => {
    await fc.assert(
      fc.asyncProperty(fc.boolean(), validBody(schemaOf('UpdateTenantRequest'), uniq), invalidBody(schemaOf('UpdateTenantRequest'), uniq), async (valid, good, bad) => {
        const body = valid ? good : bad;
        const r = await send('put', `/api/setup/tenant/${updatable}`, admin, body);
        const ok = valid ? [200, 409].includes(r.status) : r.status === 400;
        if (!ok) throw new Error(`${valid ? 'valid' : 'invalid'}: ${describeFailure(body, r)}`);
      }),
      { numRuns: 80 },
    );
  });
});

describe('registerTenant (POST /api/tenants/register)', () => {
  it('accepts valid bodies (201, or 409 for a taken slug), refuses invalid ones with 400, never 5xx', async () => {
    await fc.assert(
      fc.asyncProperty(fc.boolean(), validBody(schemaOf('RegisterTenantRequest'), uniq), invalidBody(schemaOf('RegisterTenantRequest'), uniq), async (valid, good, bad) => {
        const body = valid ? { ...(good as Record<string, unknown>), include_sample_data: false } : bad;
        const token = `Bearer ${tokenFor({ sub: unique('registrant') })}`;
        const r = await send('post', '/api/tenants/register', token, body);
        const ok = valid ? [201, 409].includes(r.status) : r.status === 400;
        if (!ok) throw new Error(`${valid ? 'valid' : 'invalid'}: ${describeFailure(body, r)}`);
        if (valid && r.status === 201) expect(r.body.tenant_slug).toMatch(/^[a-z0-9-]+$/);
      }),
      { numRuns: 60 },
    );
  });
});

describe('createBoard (POST /api/boards)', () => {
  it('valid bodies are stored exactly once (201), invalid ones refused with 400, never 5xx', async () => {
    const before = Number((await ownerConnection()('boards').where({ tenant_id: member.tenantId }).count<{ count: string }[]>('* as count'))[0]!.count);
    let created = 0;
    await fc.assert(
      fc.asyncProperty(fc.boolean(), validBody(schemaOf('CreateBoardRequest'), uniq), invalidBody(schemaOf('CreateBoardRequest'), uniq), async (valid, good, bad) => {
        const body = valid ? good : bad;
        const r = await send('post', '/api/boards', member.token, body, member.slug);
        const ok = valid ? r.status === 201 : r.status === 400;
        if (!ok) throw new Error(`${valid ? 'valid' : 'invalid'}: ${describeFailure(body, r)}`);
        if (r.status === 201) {
          created++;
          expect(r.body.name).toBe((good as { name: string }).name);
        }
      }),
      { numRuns: 120 },
    );
    const after = Number((await ownerConnection()('boards').where({ tenant_id: member.tenantId }).count<{ count: string }[]>('* as count'))[0]!.count);
    expect(after - before).toBe(created);
  });
});

describe('any JSON at all', () => {
  it('is answered without a 5xx on every body-taking endpoint', async () => {
    const targets: Array<[string, string, string | undefined]> = [
      ['/api/setup/tenant', admin, undefined],
      ['/api/tenants/register', member.token, undefined],
      ['/api/boards', member.token, member.slug],
      ['/api/tenant/members', member.token, member.slug],
    ];
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...targets), fc.jsonValue({ maxDepth: 4 }), async ([path, auth, tenant], body) => {
        const r = await send('post', path, auth, body, tenant);
        if (r.status >= 500) throw new Error(`${path}: ${describeFailure(body, r)}`);
      }),
      { numRuns: 150 },
    );
  });
});
