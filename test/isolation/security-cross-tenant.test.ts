/**
 * Cross-tenant attacks: an admin of tenant A tries every tenant-scoped endpoint against tenant
 * B: B's ids inside A's context, B's slug in X-Tenant, a claim for A with B in X-Tenant, B's
 * email domain, B in a forged claim signed by the wrong key (or by none), and the setup
 * endpoints. Every attempt is refused; no response carries any of B's ids, names or settings;
 * B's rows in every table are exactly what they were.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import request from 'supertest';
import { LOCAL_ISSUER, loadOrCreateLocalKeys, signLocalToken } from '../../src/auth/local-keys';
import { TENANT_TABLES } from '../../src/db/schema';
import { startTestApp, type TestApp } from '../helpers/app';
import { adminToken, closeOwnerConnection, createTenant, createUser, ownerConnection, tokenFor, unique } from '../helpers/factories';

let t: TestApp;
let A: { id: string; slug: string };
let B: { id: string; slug: string; name: string };
let aAdmin: { id: string; subject: string };
let bUser: { id: string; subject: string };
let bBoards: string[];
let tokA: string;
let secrets: string[];

/** B's rows in every tenant table, as text: equal before and after means nothing of B changed. */
async function snapshotOfB(): Promise<Record<string, string[]>> {
  const db = ownerConnection();
  const out: Record<string, string[]> = {};
  for (const table of ['tenants', ...TENANT_TABLES]) {
    const col = table === 'tenants' ? 'id' : 'tenant_id';
    const r = await db.raw<{ rows: Array<{ row: string }> }>(`select t::text as row from ${table} t where ${col} = ? order by 1`, [B.id]);
    out[table] = r.rows.map((x) => x.row);
  }
  return out;
}

beforeAll(async () => {
  t = await startTestApp({ SERVICE_MULTI_TENANT_MODE: 'true' });
  A = await createTenant({ slug: unique('attacker') });
  const aSubject = unique('mallory');
  aAdmin = { id: (await createUser(A.id, { subject: aSubject, role: 'admin' })).id, subject: aSubject };
  tokA = `Bearer ${tokenFor({ sub: aSubject })}`;

  // B through the API, with sample data: boards, generations, members, a provider config, credits.
  const bSlug = unique('victim');
  const created = await request(t.app)
    .post('/api/setup/tenant')
    .set('Authorization', `Bearer ${adminToken()}`)
    .send({ name: `Victim ${bSlug}`, slug: bSlug, settings: { admin_email: 'boss@victim.example', billing_plan: 'secret-plan-b' }, include_sample_data: true })
    .expect(201);
  B = { id: created.body.tenant_id, slug: bSlug, name: `Victim ${bSlug}` };
  const bSubject = unique('bob');
  bUser = { id: (await createUser(B.id, { subject: bSubject, role: 'admin' })).id, subject: bSubject };
  bBoards = (await ownerConnection()('boards').where({ tenant_id: B.id }).select('id')).map((r: { id: string }) => r.id);
  expect(bBoards.length).toBeGreaterThan(0);
  const generations = (await ownerConnection()('generations').where({ tenant_id: B.id }).select('id')).map((r: { id: string }) => r.id);
  secrets = [B.id, B.name, bUser.id, bUser.subject, 'secret-plan-b', 'boss@victim.example', ...bBoards, ...generations];
});

afterAll(async () => {
  await t.close();
  await closeOwnerConnection();
});

interface Attack {
  name: string;
  send: () => request.Test;
  status: number;
  error: string;
}

function attacks(): Attack[] {
  const app = t.app;
  const inA = (test: request.Test) => test.set('Authorization', tokA).set('X-Tenant', A.slug);
  const asAtoB = (test: request.Test) => test.set('Authorization', tokA).set('X-Tenant', B.slug);
  const claimAheaderB = `Bearer ${tokenFor({ sub: aAdmin.subject, tenant: A.slug })}`;
  const emailOfB = `Bearer ${tokenFor({ sub: unique('spoof'), email: `ceo@${B.slug}.com` })}`;

  // Forged: a `tenant: B` claim signed by a key the service does not trust, or not signed at all.
  const otherDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tenant-service-forger-'));
  const forgedKey = loadOrCreateLocalKeys(otherDir);
  fs.rmSync(otherDir, { recursive: true, force: true });
  const forged = `Bearer ${signLocalToken(forgedKey, { sub: bUser.subject, tenant: B.slug, admin: true })}`;
  const forgedKid = (() => {
    // The trusted key's kid on a token signed by the forger's key.
    const trusted = loadOrCreateLocalKeys(t.config.dataDir);
    const header = Buffer.from(JSON.stringify({ alg: 'RS256', typ: 'JWT', kid: trusted.kid })).toString('base64url');
    const now = Math.floor(Date.now() / 1000);
    const body = Buffer.from(JSON.stringify({ sub: bUser.subject, iss: LOCAL_ISSUER, tenant: B.slug, iat: now, exp: now + 600 })).toString('base64url');
    const sig = crypto.sign('RSA-SHA256', Buffer.from(`${header}.${body}`), forgedKey.privateKey).toString('base64url');
    return `Bearer ${header}.${body}.${sig}`;
  })();
  const unsigned = (() => {
    const now = Math.floor(Date.now() / 1000);
    const enc = (v: object) => Buffer.from(JSON.stringify(v)).toString('base64url');
    return `Bearer ${enc({ alg: 'none', typ: 'JWT' })}.${enc({ sub: bUser.subject, iss: LOCAL_ISSUER, tenant: B.slug, iat: now, exp: now + 600 })}.`;
  })();
  const forgedOrg = `Bearer ${signLocalToken(forgedKey, { sub: aAdmin.subject, extraClaims: { org: { slug: B.slug } } })}`;

  const endpoints: Array<{ label: string; make: () => request.Test }> = [
    { label: 'GET /api/tenant', make: () => request(app).get('/api/tenant') },
    { label: 'GET /api/tenant/members', make: () => request(app).get('/api/tenant/members') },
    { label: 'POST /api/tenant/members', make: () => request(app).post('/api/tenant/members').send({ subject: aAdmin.subject, issuer: LOCAL_ISSUER, email: 'm@attacker.example', role: 'admin' }) },
    { label: 'DELETE /api/tenant/members/{B user}', make: () => request(app).delete(`/api/tenant/members/${bUser.id}`) },
    { label: 'GET /api/boards', make: () => request(app).get('/api/boards') },
    { label: 'POST /api/boards', make: () => request(app).post('/api/boards').send({ name: 'planted by A' }) },
    { label: 'GET /api/boards/{B board}', make: () => request(app).get(`/api/boards/${bBoards[0]}`) },
  ];

  const list: Attack[] = [
    // B's ids inside A's own context: not found, never B's row.
    { name: "A's context, B's board", send: () => inA(request(app).get(`/api/boards/${bBoards[0]}`)), status: 404, error: 'Not found' },
    ...bBoards.slice(1).map((id) => ({ name: `A's context, B's board ${id}`, send: () => inA(request(app).get(`/api/boards/${id}`)), status: 404, error: 'Not found' })),
    { name: "A's context, delete B's member", send: () => inA(request(app).delete(`/api/tenant/members/${bUser.id}`)), status: 404, error: 'Not found' },
    // The setup API is for platform admins only.
    { name: "setup: read B", send: () => request(app).get(`/api/setup/tenant/${B.id}`).set('Authorization', tokA), status: 403, error: 'Forbidden' },
    { name: 'setup: update B', send: () => request(app).put(`/api/setup/tenant/${B.id}`).set('Authorization', tokA).send({ name: 'owned' }), status: 403, error: 'Forbidden' },
    { name: 'setup: delete B', send: () => request(app).delete(`/api/setup/tenant/${B.id}`).set('Authorization', tokA), status: 403, error: 'Forbidden' },
    { name: 'setup: list tenants', send: () => request(app).get(`/api/setup/tenants?q=${B.slug}`).set('Authorization', tokA), status: 403, error: 'Forbidden' },
    { name: 'setup: audit B', send: () => request(app).get(`/api/setup/audit?tenant_slug=${B.slug}`).set('Authorization', tokA), status: 403, error: 'Forbidden' },
    // Registration cannot take over B's slug.
    {
      name: "register with B's slug",
      send: () => request(app).post('/api/tenants/register').set('Authorization', tokA).send({ organization_name: 'Takeover', organization_slug: B.slug, admin_email: 'x@attacker.example', include_sample_data: false }),
      status: 409,
      error: 'Conflict',
    },
  ];
  for (const e of endpoints) {
    list.push(
      { name: `X-Tenant B: ${e.label}`, send: () => asAtoB(e.make()), status: 403, error: 'Access denied' },
      { name: `claim A + X-Tenant B: ${e.label}`, send: () => e.make().set('Authorization', claimAheaderB).set('X-Tenant', B.slug), status: 403, error: 'Access denied' },
      { name: `B's email domain: ${e.label}`, send: () => e.make().set('Authorization', emailOfB), status: 403, error: 'Access denied' },
      { name: `forged claim for B (wrong key): ${e.label}`, send: () => e.make().set('Authorization', forged), status: 401, error: 'Unauthorized' },
      { name: `forged claim for B (trusted kid, wrong key): ${e.label}`, send: () => e.make().set('Authorization', forgedKid), status: 401, error: 'Unauthorized' },
      { name: `unsigned claim for B: ${e.label}`, send: () => e.make().set('Authorization', unsigned), status: 401, error: 'Unauthorized' },
      { name: `forged org claim for B: ${e.label}`, send: () => e.make().set('Authorization', forgedOrg).set('X-Tenant', B.slug), status: 401, error: 'Unauthorized' },
    );
  }
  return list;
}

describe('cross-tenant attacks by an admin of tenant A against tenant B', () => {
  it('are all refused, reveal nothing of B, and change nothing of B', async () => {
    const before = await snapshotOfB();
    expect(before.boards!.length).toBeGreaterThan(0);
    expect(before.generations!.length).toBeGreaterThan(0);
    const list = attacks();
    for (const a of list) {
      const req = a.send();
      // What the attacker sent may be echoed back (a 404 naming the id asked for); anything else of B may not.
      const sent = `${(req as unknown as { url: string }).url} ${JSON.stringify((req as unknown as { _data?: unknown })._data ?? '')}`;
      const r = await req;
      expect({ name: a.name, status: r.status, error: r.body?.error }).toEqual({ name: a.name, status: a.status, error: a.error });
      const text = JSON.stringify(r.body);
      for (const s of secrets.filter((x) => !sent.includes(x))) {
        expect({ name: a.name, leaks: text.includes(s) ? s : null }).toEqual({ name: a.name, leaks: null });
      }
    }
    expect(list.length).toBeGreaterThan(50);
    expect(await snapshotOfB()).toEqual(before);
  });

  it("A's own lists never contain B's rows", async () => {
    for (const p of ['/api/boards', '/api/tenant/members', '/api/tenant']) {
      const r = await request(t.app).get(p).set('Authorization', tokA).set('X-Tenant', A.slug).expect(200);
      const text = JSON.stringify(r.body);
      for (const s of secrets) expect({ p, leaks: text.includes(s) ? s : null }).toEqual({ p, leaks: null });
    }
    const mine = await request(t.app).get('/api/tenants/mine').set('Authorization', tokA).expect(200);
    expect(mine.body.tenants.map((x: { slug: string }) => x.slug)).toEqual([A.slug]);
  });

  it('the same requests succeed for B\'s own member (the refusals above are about the tenant, not the request)', async () => {
    const tokB = `Bearer ${tokenFor({ sub: bUser.subject })}`;
    const r = await request(t.app).get(`/api/boards/${bBoards[0]}`).set('Authorization', tokB).set('X-Tenant', B.slug).expect(200);
    expect(r.body.board_id).toBe(bBoards[0]);
    await request(t.app).get('/api/tenant/members').set('Authorization', tokB).set('X-Tenant', B.slug).expect(200);
  });
});
