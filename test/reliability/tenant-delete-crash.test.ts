/**
 * A tenant delete records its intent before it deletes anything: the real server process
 * (`node dist/src/server.js`, on a database of its own) is killed with SIGKILL while the
 * batches of a tenant with many rows run, and `tenant.deletion_started` is in the log for that
 * tenant afterwards (`tenant.deleted` is not: the delete never finished).
 *
 * To kill it mid-delete without guessing at timings, the test holds a row lock on one of the
 * tenant's users (the last table the batches reach): the delete commits its earlier batches,
 * then waits on that lock, and is killed while it waits.
 */
import knexFactory, { type Knex } from 'knex';
import { TEST_DATA_DIR } from '../helpers/app';
import { createFreshDatabase, type FreshDatabase } from '../helpers/fresh-database';
import { freePort } from '../helpers/pg-cluster';
import { buildOnce, startServerProcess, stopServer, waitUntilReady, type ServerProcess } from '../helpers/server-process';
import { adminToken, unique } from '../helpers/factories';

jest.setTimeout(240_000);

let fresh: FreshDatabase;
let owner: Knex;
let server: ServerProcess | null = null;
const admin = { Authorization: `Bearer ${adminToken()}`, 'Content-Type': 'application/json' };

beforeAll(async () => {
  await buildOnce();
  fresh = await createFreshDatabase('tenant_service_delete_crash');
  owner = knexFactory({ client: 'pg', connection: fresh.url, pool: { min: 0, max: 3 } });
}, 180_000);

afterAll(async () => {
  if (server) await stopServer(server, 'SIGKILL');
  await owner?.destroy();
  await fresh?.drop();
});

async function until(what: string, fn: () => Promise<boolean>, boundMs = 120_000): Promise<void> {
  const deadline = Date.now() + boundMs;
  while (!(await fn())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function count(table: string, tenantId: string): Promise<number> {
  return Number((await owner(table).where({ tenant_id: tenantId }).count({ n: '*' }))[0]!.n);
}

it('SIGKILL during the batches leaves tenant.deletion_started in the log', async () => {
  const port = await freePort();
  server = startServerProcess(port, {
    SERVICE_DATABASE_URL: fresh.url,
    SERVICE_DATA_DIR: TEST_DATA_DIR,
    SERVICE_MULTI_TENANT_MODE: 'true',
    SERVICE_RATE_LIMIT_ENABLED: 'false',
  });
  expect(await waitUntilReady(server, 60_000)).toBe(200);

  const slug = unique('crash');
  const created = await fetch(`${server.baseUrl}/api/setup/tenant`, { method: 'POST', headers: admin, body: JSON.stringify({ name: 'Crash Co', slug, include_sample_data: true }) });
  expect(created.status).toBe(201);
  const tenantId = ((await created.json()) as { tenant_id: string }).tenant_id;
  // Many rows: several batches of the default 5 000 in generations before the users are reached.
  await owner.raw(
    `insert into users (tenant_id, issuer, subject, email, role)
     select ?, 'urn:crash', 'user-' || g, 'user-' || g || '@crash.test', 'member' from generate_series(1, 2000) g`,
    [tenantId],
  );
  await owner.raw(
    `insert into generations (tenant_id, board_id, prompt, media_url, media_type)
     select ?, b.id, 'prompt ' || g, 'https://media.example.test/' || g || '.png', 'image/png'
       from generate_series(1, 20000) g, (select id from boards where tenant_id = ? limit 1) b`,
    [tenantId, tenantId],
  );
  const generationsBefore = await count('generations', tenantId);
  expect(generationsBefore).toBeGreaterThan(15_000);

  const locker = await owner.transaction();
  try {
    const pid = Number((await locker.raw<{ rows: Array<{ pid: number }> }>('select pg_backend_pid() as pid')).rows[0]!.pid);
    await locker('users').where({ tenant_id: tenantId, subject: 'user-1' }).forUpdate().select('id');

    const deleting = fetch(`${server.baseUrl}/api/setup/tenant/${tenantId}`, { method: 'DELETE', headers: admin }).catch(() => null);
    // The delete is mid-way once one of its statements waits for the lock this test holds.
    await until('the delete to wait on the locked user', async () => {
      const r = await owner.raw<{ rows: Array<{ n: string }> }>('select count(*) as n from pg_stat_activity where ? = any(pg_blocking_pids(pid))', [pid]);
      return Number(r.rows[0]!.n) > 0;
    });
    expect(await stopServer(server, 'SIGKILL')).toEqual({ code: null, signal: 'SIGKILL' });
    server = null;
    expect(await deleting).toBeNull(); // the connection died with the process: no answer
  } finally {
    await locker.rollback();
  }

  // Mid-delete: the earlier batches committed, the tenant and its locked table remain.
  expect(await count('generations', tenantId)).toBe(0);
  expect(await count('users', tenantId)).toBeGreaterThan(0);
  expect(await owner('tenants').where({ id: tenantId }).first()).toBeDefined();
  const events = (await owner('events').where({ tenant_id: tenantId }).orderBy('occurred_at').select('action', 'actor_platform_admin', 'data')) as Array<{
    action: string;
    actor_platform_admin: boolean;
    data: { tenant: { slug: string } };
  }>;
  expect(events.map((e) => e.action)).toEqual(['tenant.created', 'tenant.deletion_started']);
  expect(events[1]).toMatchObject({ actor_platform_admin: true, data: { tenant: { slug } } });
});
