/**
 * Only committed changes drop remembered decisions (docs/architecture.md "Decisions from
 * memory"): a refused or failed write — with or without credentials — drops nothing, a
 * committed change of one tenant drops only that tenant, and this instance honours its own
 * committed change on its very next request.
 */
import request from 'supertest';
import { startTestApp, type TestApp } from '../../helpers/app';
import { adminToken, closeOwnerConnection, tenantWithMember, tokenFor } from '../../helpers/factories';

let app: TestApp;
const admin = `Bearer ${adminToken()}`;

beforeAll(async () => {
  app = await startTestApp({ SERVICE_MULTI_TENANT_MODE: 'true' });
  // Memory is answered from only while the listener listens: wait for that condition.
  while (app.services.decisionMemory?.facts?.state !== 'listening') await new Promise((r) => setTimeout(r, 20));
}, 60_000);
afterAll(async () => {
  await app?.close();
  await closeOwnerConnection();
});

async function lookups(): Promise<{ memory: number; database: number }> {
  const text = (await request(app.app).get('/metrics').expect(200)).text;
  // Only this family's lines: other families may hold values of no interest here (NaN).
  const v = (from: string) => Number(new RegExp(`^tenant_service_decision_facts_lookups_total\\{from="${from}"\\} (\\S+)$`, 'm').exec(text)?.[1] ?? 0);
  return { memory: v('memory'), database: v('database') };
}

/** Where one decision of `token` in `slug` was answered from (memory or database). */
async function decidedFrom(token: string, slug: string, status = 200): Promise<'memory' | 'database'> {
  const before = await lookups();
  await request(app.app).get('/api/tenant/decision').set('Authorization', `Bearer ${token}`).set('X-Tenant', slug).expect(status);
  const after = await lookups();
  expect(after.memory - before.memory + after.database - before.database).toBe(1);
  return after.memory > before.memory ? 'memory' : 'database';
}

describe('refused writes drop nothing', () => {
  it("another tenant's decisions stay answered from memory across refused writes, with and without credentials", async () => {
    const other = await tenantWithMember('member');
    await decidedFrom(other.token, other.tenant.slug);
    expect(await decidedFrom(other.token, other.tenant.slug)).toBe('memory');

    // A bogus invitation accept (a caller's write), a bogus console sign-in code (no credentials),
    // a platform write refused for a non-admin, a platform write refused as not found, and an
    // unauthenticated tenant write.
    const stranger = `Bearer ${tokenFor({ email: 'stranger@example.test' })}`;
    await request(app.app).post('/api/invitations/accept').set('Authorization', stranger).send({ token: 'not-an-invitation' }).expect(404);
    await request(app.app).post('/api/console/sessions').send({ code: 'A'.repeat(43) }).expect(400);
    await request(app.app).post('/api/setup/tenant').set('Authorization', stranger).send({ name: 'Nope', slug: 'nope-nope' }).expect(403);
    await request(app.app).post('/api/setup/tenant/00000000-0000-4000-8000-000000000000/suspend').set('Authorization', admin).send({ reason: 'x' }).expect(404);
    await request(app.app).post('/api/tenant/members').set('X-Tenant', other.tenant.slug).send({}).expect(401);

    expect(await decidedFrom(other.token, other.tenant.slug)).toBe('memory');
  });
});

describe('committed changes drop only what they change', () => {
  it("a committed change of one tenant drops that tenant at once on this instance, and not another tenant's facts", async () => {
    const changed = await tenantWithMember('member');
    const kept = await tenantWithMember('member');
    for (const t of [changed, kept]) {
      await decidedFrom(t.token, t.tenant.slug);
      expect(await decidedFrom(t.token, t.tenant.slug)).toBe('memory');
    }

    await request(app.app).post(`/api/setup/tenant/${changed.tenant.id}/suspend`).set('Authorization', admin).send({ reason: 'test' }).expect(200);

    // Read your own write: the very next request is refused, decided on the database's facts.
    expect(await decidedFrom(changed.token, changed.tenant.slug, 403)).toBe('database');
    expect(await decidedFrom(kept.token, kept.tenant.slug)).toBe('memory');
  });
});
