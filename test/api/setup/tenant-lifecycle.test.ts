/**
 * Suspension and scheduled deletion (docs/operations.md#tenant-lifecycle): every
 * tenant-scoped operation of openapi.yaml — read from the contract's x-access, so a new
 * operation is covered without editing this file — is refused with 403 `Tenant suspended` while
 * the tenant is suspended or pending deletion, and admitted again after reactivation or
 * cancellation; invitation accept too; platform admins keep reading it; the lifecycle
 * endpoints refuse everyone but platform admins, and record their events.
 */
import fc from 'fast-check';
import request from 'supertest';
import { readContractOperations, type ContractOperation } from '../../../src/http/contract';
import { loadOpenApiDocument } from '../../../src/openapi-document';
import { startTestApp, type TestApp } from '../../helpers/app';
import { validBody, type Schema } from '../../helpers/schema-arbitrary';
import { adminToken, closeOwnerConnection, createTenant, createUser, ownerConnection, tenantWithMember, tokenFor, unique } from '../../helpers/factories';

let t: TestApp;
let single: TestApp;
beforeAll(async () => {
  t = await startTestApp({ SERVICE_MULTI_TENANT_MODE: 'true' });
  single = await startTestApp({ SERVICE_MULTI_TENANT_MODE: 'false' });
});
afterAll(async () => {
  await Promise.all([t, single].map((a) => a?.close()));
  await closeOwnerConnection();
});

const bearer = (token: string) => `Bearer ${token}`;
const ADMIN = adminToken();

const TENANT_LEVELS = new Set(['tenantMember', 'tenantAdmin', 'tenantPlatformAdmin']);
const TENANT_OPERATIONS = readContractOperations().filter((o) => TENANT_LEVELS.has(o.access));
const doc = loadOpenApiDocument() as { paths: Record<string, Record<string, { requestBody?: { content: Record<string, { schema: Schema }> } }>> };

/** A body the operation's schema accepts (from openapi.yaml), so validation never answers first. */
function bodyFor(op: ContractOperation): unknown {
  const schema = doc.paths[op.path]![op.method.toLowerCase()]!.requestBody?.content['application/json']?.schema;
  if (!schema) return undefined;
  return fc.sample(validBody(schema, () => unique('b')), { numRuns: 1, seed: 42 })[0];
}

/** The request of one tenant operation, every path parameter a fresh UUID. */
function call(op: ContractOperation, slug: string, token: string) {
  const path = op.path.replace(/\{[^}]+\}/g, () => crypto.randomUUID());
  const r = request(t.app)[op.method.toLowerCase() as 'get' | 'post' | 'put' | 'patch' | 'delete'](path).set('Authorization', bearer(token)).set('X-Tenant', slug);
  const body = bodyFor(op);
  return body === undefined ? r : r.send(body as object);
}

/** A tenant whose one admin member is also a platform admin, so every access level admits it while active. */
async function tenantWithOperator() {
  const tenant = await createTenant();
  const user = await createUser(tenant.id, { role: 'admin' });
  return { tenant, user, token: tokenFor({ sub: user.subject, email: user.email, admin: true }) };
}

const post = (path: string, token = ADMIN) => request(t.app).post(path).set('Authorization', bearer(token));

describe.each([
  ['suspended', (id: string) => post(`/api/setup/tenant/${id}/suspend`).send({ reason: 'Invoice unpaid' }), (id: string) => post(`/api/setup/tenant/${id}/reactivate`)],
  [
    'pending deletion',
    (id: string) => post(`/api/setup/tenant/${id}/scheduled-deletion`).send({ grace_days: 7 }),
    (id: string) => request(t.app).delete(`/api/setup/tenant/${id}/scheduled-deletion`).set('Authorization', bearer(ADMIN)),
  ],
])('a %s tenant', (_name, close, reopen) => {
  it('the contract has tenant operations to check', () => {
    expect(TENANT_OPERATIONS.length).toBeGreaterThan(10);
  });

  it('refuses every tenant-scoped operation with 403 Tenant suspended, without the reason; admits them again after', async () => {
    const { tenant, token } = await tenantWithOperator();
    await close(tenant.id).expect(200);
    for (const op of TENANT_OPERATIONS) {
      const r = await call(op, tenant.slug, token);
      expect({ op: op.operationId, status: r.status, error: r.body.error, detail: r.status === 403 ? undefined : r.body.detail }).toEqual({ op: op.operationId, status: 403, error: "Tenant suspended" });
      expect(JSON.stringify(r.body)).not.toContain('Invoice unpaid');
    }
    await reopen(tenant.id).expect(200);
    for (const op of TENANT_OPERATIONS) {
      const r = await call(op, tenant.slug, token);
      expect({ op: op.operationId, refused: r.status === 403 || r.status >= 500 }).toEqual({ op: op.operationId, refused: false });
    }
  });

  it('refuses the accept of an invitation to it; accepts it again after', async () => {
    const { tenant, token } = await tenantWithMember('admin');
    const email = `${unique('inv')}@example.test`;
    const inv = await request(t.app).post('/api/tenant/invitations').set('Authorization', bearer(token)).set('X-Tenant', tenant.slug).send({ email }).expect(201);
    const invitee = tokenFor({ sub: unique('invitee'), email, claims: { email_verified: true } });
    await close(tenant.id).expect(200);
    const refused = await request(t.app).post('/api/invitations/accept').set('Authorization', bearer(invitee)).send({ token: inv.body.token }).expect(403);
    expect(refused.body.error).toBe('Tenant suspended');
    await reopen(tenant.id).expect(200);
    await request(t.app).post('/api/invitations/accept').set('Authorization', bearer(invitee)).send({ token: inv.body.token }).expect(200);
  });

  it('a stranger is told nothing of the state: 403 Access denied', async () => {
    const tenant = await createTenant();
    await close(tenant.id).expect(200);
    const r = await request(t.app).get('/api/tenant').set('Authorization', bearer(tokenFor())).set('X-Tenant', tenant.slug).expect(403);
    expect(r.body.error).toBe('Access denied');
  });

  it('platform admins keep reading and updating it; a member sees the state in /api/tenants/mine', async () => {
    const { tenant, token } = await tenantWithMember('member');
    const closed = await close(tenant.id).expect(200);
    const status = closed.body.status as string;
    expect((await request(t.app).get(`/api/setup/tenant/${tenant.id}`).set('Authorization', bearer(ADMIN)).expect(200)).body.status).toBe(status);
    await request(t.app).put(`/api/setup/tenant/${tenant.id}`).set('Authorization', bearer(ADMIN)).send({ name: 'Renamed while closed' }).expect(200);
    const mine = await request(t.app).get('/api/tenants/mine').set('Authorization', bearer(token)).expect(200);
    expect(mine.body.tenants.find((m: { slug: string }) => m.slug === tenant.slug).status).toBe(status);
    // Its status moves only through the lifecycle operations.
    const put = await request(t.app).put(`/api/setup/tenant/${tenant.id}`).set('Authorization', bearer(ADMIN)).send({ status: 'active' }).expect(409);
    expect(put.body.error).toBe('Conflict');
    await reopen(tenant.id).expect(200);
  });
});

describe('suspend and reactivate', () => {
  it('200 the Tenant with suspended_at and the reason, then back; events recorded', async () => {
    const tenant = await createTenant();
    const s = await post(`/api/setup/tenant/${tenant.id}/suspend`).send({ reason: 'Payment overdue' }).expect(200);
    expect(s.body).toMatchObject({ tenant_id: tenant.id, status: 'suspended', suspension_reason: 'Payment overdue', delete_after: null });
    expect(new Date(s.body.suspended_at).getTime()).not.toBeNaN();
    const r = await post(`/api/setup/tenant/${tenant.id}/reactivate`).expect(200);
    expect(r.body).toMatchObject({ status: 'active', suspended_at: null, suspension_reason: null });
    const events = await ownerConnection()('events').where({ tenant_id: tenant.id }).orderBy('occurred_at').select('action', 'data');
    expect(events.map((e: { action: string }) => e.action)).toEqual(['tenant.suspended', 'tenant.reactivated']);
    expect(events[0].data.reason).toBe('Payment overdue');
  });

  it('refuses a wrong state (409), a bad reason (400), an unknown tenant (404), and changes nothing', async () => {
    const tenant = await createTenant();
    expect((await post(`/api/setup/tenant/${tenant.id}/reactivate`).expect(409)).body.error).toBe('Conflict');
    await post(`/api/setup/tenant/${tenant.id}/suspend`).send({ reason: '' }).expect(400);
    await post(`/api/setup/tenant/${tenant.id}/suspend`).send({ reason: 'x'.repeat(501) }).expect(400);
    await post(`/api/setup/tenant/${tenant.id}/suspend`).send({}).expect(400);
    await post(`/api/setup/tenant/${crypto.randomUUID()}/suspend`).send({ reason: 'r' }).expect(404);
    const row = await ownerConnection()('tenants').where({ id: tenant.id }).first();
    expect(row).toMatchObject({ status: 'active', suspended_at: null, suspension_reason: null });
    await post(`/api/setup/tenant/${tenant.id}/suspend`).send({ reason: 'r' }).expect(200);
    await post(`/api/setup/tenant/${tenant.id}/suspend`).send({ reason: 'again' }).expect(409);
  });

  it('the default tenant cannot be suspended or scheduled for deletion in single-tenant mode (400)', async () => {
    const def = await ownerConnection()('tenants').where({ is_default: true }).first('id');
    const a = await request(single.app).post(`/api/setup/tenant/${def.id}/suspend`).set('Authorization', bearer(ADMIN)).send({ reason: 'no' }).expect(400);
    expect(a.body.error).toBe('Bad request');
    await request(single.app).post(`/api/setup/tenant/${def.id}/scheduled-deletion`).set('Authorization', bearer(ADMIN)).send({}).expect(400);
    expect((await ownerConnection()('tenants').where({ id: def.id }).first('status')).status).toBe('active');
  });
});

describe('scheduled deletion: schedule and cancel', () => {
  it('200 pending_deletion with delete_after (default 30 days); cancel restores the status it had, suspension included', async () => {
    const tenant = await createTenant();
    await post(`/api/setup/tenant/${tenant.id}/suspend`).send({ reason: 'Leaving' }).expect(200);
    const s = await post(`/api/setup/tenant/${tenant.id}/scheduled-deletion`).expect(200);
    expect(s.body.status).toBe('pending_deletion');
    const days = (new Date(s.body.delete_after).getTime() - Date.now()) / 86_400_000;
    expect(days).toBeGreaterThan(29.9);
    expect(days).toBeLessThanOrEqual(30);
    await post(`/api/setup/tenant/${tenant.id}/scheduled-deletion`).send({ grace_days: 5 }).expect(409);
    const c = await request(t.app).delete(`/api/setup/tenant/${tenant.id}/scheduled-deletion`).set('Authorization', bearer(ADMIN)).expect(200);
    expect(c.body).toMatchObject({ status: 'suspended', suspension_reason: 'Leaving', delete_after: null });
    await request(t.app).delete(`/api/setup/tenant/${tenant.id}/scheduled-deletion`).set('Authorization', bearer(ADMIN)).expect(409);
    const actions = (await ownerConnection()('events').where({ tenant_id: tenant.id }).orderBy('occurred_at').select('action')).map((e: { action: string }) => e.action);
    expect(actions).toEqual(['tenant.suspended', 'tenant.deletion_scheduled', 'tenant.deletion_cancelled']);
  });

  it('grace_days outside 1–90 is 400 and changes nothing', async () => {
    const tenant = await createTenant();
    for (const grace of [0, 91, 1.5, '7']) {
      await post(`/api/setup/tenant/${tenant.id}/scheduled-deletion`).send({ grace_days: grace }).expect(400);
    }
    expect((await ownerConnection()('tenants').where({ id: tenant.id }).first('status')).status).toBe('active');
  });
});

describe('only platform admins', () => {
  it('a member, a tenant admin and a stranger are refused by every lifecycle endpoint (403), and nothing changes', async () => {
    const member = await tenantWithMember('member');
    const admin = await createUser(member.tenant.id, { role: 'admin' });
    const callers = { member: member.token, tenantAdmin: tokenFor({ sub: admin.subject, email: admin.email }), stranger: tokenFor() };
    const id = member.tenant.id;
    for (const [who, token] of Object.entries(callers)) {
      const calls = [
        post(`/api/setup/tenant/${id}/suspend`, token).set('X-Tenant', member.tenant.slug).send({ reason: 'r' }),
        post(`/api/setup/tenant/${id}/reactivate`, token),
        post(`/api/setup/tenant/${id}/scheduled-deletion`, token).send({}),
        request(t.app).delete(`/api/setup/tenant/${id}/scheduled-deletion`).set('Authorization', bearer(token)),
        request(t.app).get(`/api/setup/tenant/${id}/export`).set('Authorization', bearer(token)),
        post('/api/setup/tenants/import', token).set('Content-Type', 'application/x-ndjson').send('{}\n'),
      ];
      for (const c of calls) {
        const r = await c;
        expect({ who, status: r.status, error: r.body.error }).toEqual({ who, status: 403, error: 'Forbidden' });
      }
    }
    expect((await ownerConnection()('tenants').where({ id }).first('status')).status).toBe('active');
    expect(await ownerConnection()('events').where({ tenant_id: id })).toEqual([]);
  });
});
