/**
 * From single-tenant to multi-tenant (docs/tenants.md#from-single-tenant-to-multi-tenant): run
 * single-tenant, create users and boards, restart with SERVICE_MULTI_TENANT_MODE=true on the same
 * database, find every row still in the default tenant and reachable with `X-Tenant: default` by
 * its members, then add a second tenant and see the two isolated. On a database of its own, so
 * "every row" is exact.
 */
import knexFactory, { type Knex } from 'knex';
import pino from 'pino';
import request from 'supertest';
import { migrate } from '../../src/db/database';
import { TENANT_TABLES } from '../../src/db/schema';
import { startTestApp, type TestApp } from '../helpers/app';
import { createFreshDatabase, type FreshDatabase } from '../helpers/fresh-database';
import { adminToken, tokenFor, unique } from '../helpers/factories';

let fresh: FreshDatabase;
let owner: Knex;
let app: TestApp | null = null;

beforeAll(async () => {
  fresh = await createFreshDatabase('tenant_service_migration');
  owner = knexFactory({ client: 'pg', connection: fresh.url, pool: { min: 0, max: 1 } });
});
afterAll(async () => {
  await app?.close();
  await owner.destroy();
  await fresh.drop();
});

/** Every row of every tenant table, as the owner (no row-level security), in a stable order. */
async function snapshot(): Promise<Record<string, Array<Record<string, unknown>>>> {
  const out: Record<string, Array<Record<string, unknown>>> = {};
  for (const table of TENANT_TABLES) {
    // Ordered by the whole row: every tenant table, whatever its columns (not all have created_at).
    out[table] = (await owner.raw<{ rows: Array<Record<string, unknown>> }>('select * from ?? t order by to_jsonb(t)::text', [table])).rows;
  }
  return out;
}

it('keeps single-tenant data in the default tenant and isolates a second tenant', async () => {
  const admin = `Bearer ${adminToken()}`;
  // No email claim: it would name a tenant by its domain (docs/tenants.md#tenant-resolution: the email domain).
  const alice = tokenFor({ sub: unique('alice') });
  const bob = tokenFor({ sub: unique('bob') });
  const bearer = (token: string) => `Bearer ${token}`;

  // 1. Single-tenant mode: no header needed; every caller is a member of the default tenant.
  app = await startTestApp({ SERVICE_DATABASE_URL: fresh.url }, { poolMax: 3 });
  const me = await request(app.app).get('/api/tenant').set('Authorization', bearer(alice)).expect(200);
  expect(me.body).toMatchObject({ tenant: { slug: 'default' }, source: 'single_tenant', membership: { role: 'member' } });
  const defaultId = me.body.tenant.tenant_id as string;
  await request(app.app).get('/api/tenant').set('Authorization', bearer(bob)).expect(200);
  const aliceBoards: string[] = [];
  for (const name of ['Roadmap', 'Launch']) {
    const b = await request(app.app).post('/api/boards').set('Authorization', bearer(alice)).send({ name }).expect(201);
    aliceBoards.push(b.body.board_id);
  }
  const bobBoard = (await request(app.app).post('/api/boards').set('Authorization', bearer(bob)).send({ name: 'Notes', description: 'Bob' }).expect(201)).body
    .board_id as string;

  const before = await snapshot();
  expect(before.users).toHaveLength(2);
  expect(before.boards).toHaveLength(3);
  for (const rows of Object.values(before)) for (const row of rows) expect(row.tenant_id).toBe(defaultId);

  // 2. Restart in multi-tenant mode on the same database: boot runs the migrations again.
  await app.close();
  app = null;
  await migrate(fresh.url, 'default', pino({ level: 'silent' }));
  app = await startTestApp({ SERVICE_DATABASE_URL: fresh.url, SERVICE_MULTI_TENANT_MODE: 'true' }, { poolMax: 3 });
  const multi = app;

  // Every row is still there, unchanged, in the default tenant.
  expect(await snapshot()).toEqual(before);
  expect((await owner('tenants').where({ is_default: true }).first()).id).toBe(defaultId);

  // A tenant must now be named…
  const missing = await request(multi.app).get('/api/boards').set('Authorization', bearer(alice)).expect(400);
  expect(missing.body).toMatchObject({ error: 'Missing X-Tenant header', multi_tenant_mode: true });
  // …and `X-Tenant: default` reaches the old data for its members.
  for (const token of [alice, bob]) {
    const t = await request(multi.app).get('/api/tenant').set('Authorization', bearer(token)).set('X-Tenant', 'default').expect(200);
    expect(t.body).toMatchObject({ tenant: { tenant_id: defaultId, slug: 'default' }, source: 'header', membership: { role: 'member' } });
    const list = await request(multi.app).get('/api/boards').set('Authorization', bearer(token)).set('X-Tenant', 'default').expect(200);
    expect(list.body.boards.map((b: { board_id: string }) => b.board_id).sort()).toEqual([...aliceBoards, bobBoard].sort());
  }
  const detail = await request(multi.app).get(`/api/boards/${bobBoard}`).set('Authorization', bearer(alice)).set('X-Tenant', 'default').expect(200);
  expect(detail.body).toMatchObject({ board_id: bobBoard, name: 'Notes', description: 'Bob' });
  const members = await request(multi.app).get('/api/tenant/members').set('Authorization', bearer(alice)).set('X-Tenant', 'default').expect(200);
  expect(members.body.members).toHaveLength(2);
  // Someone who never used the single-tenant service is not a member of the default tenant.
  const stranger = await request(multi.app).get('/api/boards').set('Authorization', bearer(tokenFor())).set('X-Tenant', 'default').expect(403);
  expect(stranger.body.error).toBe('Access denied');

  // 3. A second tenant, with its own admin and sample data.
  const second = await request(multi.app)
    .post('/api/setup/tenant')
    .set('Authorization', admin)
    .send({ name: 'Second Org', slug: 'second-org', include_sample_data: true })
    .expect(201);
  const daveSub = unique('dave');
  await request(multi.app)
    .post('/api/tenant/members')
    .set('Authorization', admin)
    .set('X-Tenant', 'second-org')
    .send({ subject: daveSub, email: 'dave@second.test', role: 'admin' })
    .expect(201);
  const dave = bearer(tokenFor({ sub: daveSub, email: 'dave@second.test' }));

  const daveBoards = await request(multi.app).get('/api/boards').set('Authorization', dave).set('X-Tenant', 'second-org').expect(200);
  expect(daveBoards.body.boards.map((b: { name: string }) => b.name).sort()).toEqual(['Brand guidelines', 'Product launch']);
  const sampleBoard = daveBoards.body.boards[0].board_id as string;

  // Isolated both ways: no membership across, and no board of the other tenant by id.
  expect((await request(multi.app).get('/api/boards').set('Authorization', dave).set('X-Tenant', 'default').expect(403)).body.error).toBe('Access denied');
  expect((await request(multi.app).get('/api/boards').set('Authorization', bearer(alice)).set('X-Tenant', 'second-org').expect(403)).body.error).toBe('Access denied');
  await request(multi.app).get(`/api/boards/${aliceBoards[0]}`).set('Authorization', dave).set('X-Tenant', 'second-org').expect(404);
  await request(multi.app).get(`/api/boards/${sampleBoard}`).set('Authorization', bearer(alice)).set('X-Tenant', 'default').expect(404);

  // New content lands in its own tenant only.
  await request(multi.app).post('/api/boards').set('Authorization', dave).set('X-Tenant', 'second-org').send({ name: 'Dave only' }).expect(201);
  const aliceAfter = await request(multi.app).get('/api/boards').set('Authorization', bearer(alice)).set('X-Tenant', 'default').expect(200);
  expect(aliceAfter.body.boards).toHaveLength(3);
  const [{ n }] = await owner('boards').where({ tenant_id: second.body.tenant_id }).count({ n: '*' });
  expect(Number(n)).toBe(3);

  // The default tenant's own rows are exactly those of single-tenant mode.
  const now = await snapshot();
  for (const table of TENANT_TABLES) {
    expect(now[table]!.filter((r) => r.tenant_id === defaultId)).toEqual(before[table]);
  }
});
