/**
 * Behind a transaction pooler (docs/operations.md#connection-poolers-pgbouncer): the service talks
 * to PostgreSQL through a real PgBouncer in `pool_mode = transaction` that resets every server
 * connection after every transaction (test/helpers/pgbouncer.ts). Session state such as a `SET
 * ROLE` on a pooled connection is then gone by the next transaction, so the runtime role must be
 * set by each transaction itself. Triggers installed by this test record `current_user` inside the
 * requests' own transactions (a board insert, and the membership insert on first use),
 * which must be the runtime role, never the connecting owner.
 *
 * The isolation suites themselves run through PgBouncer with `npm run test:pgbouncer`.
 */
import knexFactory, { type Knex } from 'knex';
import { Client } from 'pg';
import request from 'supertest';
import { startTestApp, type TestApp } from '../helpers/app';
import { createFreshDatabase, type FreshDatabase } from '../helpers/fresh-database';
import { pgbouncerBinary, pgbouncerMissing, startPgBouncer, type PgBouncer } from '../helpers/pgbouncer';
import { ADMIN_URL } from '../setup/global-setup';
import { adminToken, tokenFor, unique } from '../helpers/factories';

jest.setTimeout(120_000);

// CI installs Debian's pgbouncer (.ci/run); elsewhere the suite says why it did not run.
const available = pgbouncerBinary() !== null;
if (!available) process.stderr.write(`test/isolation/pgbouncer.test.ts skipped: ${pgbouncerMissing()}\n`);
const maybe = available ? describe : describe.skip;

maybe('behind PgBouncer in transaction mode', () => {
  let fresh: FreshDatabase;
  let bouncer: PgBouncer;
  let owner: Knex;
  let t: TestApp;

  beforeAll(async () => {
    fresh = await createFreshDatabase('tenant_service_pgbouncer');
    owner = knexFactory({ client: 'pg', connection: fresh.url, pool: { min: 0, max: 2 } });
    // Test-only spy: who runs each insert into boards and users.
    await owner.raw(`
      create table seen_roles (tbl text not null, role text not null, session_role text not null, at timestamptz not null default clock_timestamp());
      grant insert on seen_roles to tenant_service_app;
      create function record_role() returns trigger language plpgsql security invoker as $$
      begin
        insert into seen_roles (tbl, role, session_role) values (tg_table_name, current_user, session_user);
        return new;
      end $$;
      create trigger boards_seen after insert on boards for each row execute function record_role();
      create trigger users_seen after insert on users for each row execute function record_role();`);
    bouncer = await startPgBouncer(ADMIN_URL, { poolSize: 2 });
    // PgBouncer 1.18 does not keep prepared statements across transactions (1.21+ can, with
    // max_prepared_statements): the documented setting for it.
    t = await startTestApp({ SERVICE_DATABASE_URL: bouncer.via(fresh.url), SERVICE_MULTI_TENANT_MODE: 'true', SERVICE_DATABASE_PREPARED_STATEMENTS: 'false' }, { poolMax: 4 });
  });

  afterAll(async () => {
    await t?.close();
    await owner?.destroy();
    await bouncer?.stop();
    await fresh?.drop();
  });

  it('the test PgBouncer really pools by transaction and forgets session state', async () => {
    // Through the bouncer, as the owner: a session-level SET ROLE does not survive into the next
    // transaction (which may even run on another server connection). This is what broke the
    // service's per-connection `SET ROLE`.
    const client = new Client({ connectionString: bouncer.via(fresh.url) });
    await client.connect();
    try {
      const who = async (sql: string) => {
        const r = (await client.query(sql)) as unknown as { rows: Array<{ u: string }> } | Array<{ rows: Array<{ u: string }> }>;
        return (Array.isArray(r) ? r[r.length - 1]! : r).rows[0]!.u;
      };
      expect(await who('set role tenant_service_app; select current_user as u')).toBe('tenant_service_app');
      expect(await who('select current_user as u')).toBe('postgres');
    } finally {
      await client.end();
    }
  });

  it("a request's transaction runs as the runtime role, whichever server connection it gets", async () => {
    const slug = unique('bouncer');
    const created = await request(t.app)
      .post('/api/setup/tenant')
      .set('Authorization', `Bearer ${adminToken()}`)
      .send({ name: 'Bouncer', slug, include_sample_data: true })
      .expect(201);
    const tenantId = created.body.tenant_id as string;

    // Claim-asserted tenant: the caller is provisioned (an insert into users).
    const subjects = Array.from({ length: 6 }, () => unique('pooled'));
    const tokens = subjects.map((sub) => `Bearer ${tokenFor({ sub, claims: { tenant: slug } })}`);
    await Promise.all(tokens.map((tok) => request(t.app).get('/api/tenant').set('Authorization', tok).expect(200)));
    // Each member creates boards, concurrently, over the 2 server connections.
    const boards = await Promise.all(
      tokens.flatMap((tok, i) => [0, 1].map((j) => request(t.app).post('/api/boards').set('Authorization', tok).send({ name: `b${i}-${j}` }))),
    );
    expect(boards.map((r) => r.status)).toEqual(Array(boards.length).fill(201));

    const seen = (await owner('seen_roles').select('tbl', 'role', 'session_role')) as Array<{ tbl: string; role: string; session_role: string }>;
    // Sample data (2 boards), the provisioned members (6) and their boards (12).
    expect(seen.filter((s) => s.tbl === 'users').length).toBeGreaterThanOrEqual(6);
    expect(seen.filter((s) => s.tbl === 'boards').length).toBe(2 + 12);
    // The connecting user is the owner (postgres) ...
    expect(new Set(seen.map((s) => s.session_role))).toEqual(new Set(['postgres']));
    // ... yet every statement of every request ran as the runtime role.
    expect(new Set(seen.map((s) => s.role))).toEqual(new Set(['tenant_service_app']));

    const users = await owner('users').where({ tenant_id: tenantId }).whereIn('subject', subjects).count<Array<{ count: string }>>('* as count');
    expect(Number(users[0]!.count)).toBe(subjects.length);
  });

  it('tenant isolation holds through the pooler: concurrent requests of two tenants see only their own boards', async () => {
    const admin = `Bearer ${adminToken()}`;
    const make = async () => {
      const slug = unique('pooliso');
      const r = await request(t.app).post('/api/setup/tenant').set('Authorization', admin).send({ name: slug, slug, include_sample_data: true }).expect(201);
      return { id: r.body.tenant_id as string, slug, token: `Bearer ${tokenFor({ sub: unique('m'), claims: { tenant: slug } })}` };
    };
    const [a, b] = [await make(), await make()];
    const boardIds = async (tenantId: string) => new Set(((await owner('boards').where({ tenant_id: tenantId }).select('id')) as Array<{ id: string }>).map((r) => r.id));
    const ownA = await boardIds(a.id);
    const ownB = await boardIds(b.id);
    const responses = await Promise.all(
      Array.from({ length: 20 }, (_, i) => {
        const who = i % 2 ? a : b;
        return request(t.app).get('/api/boards').set('Authorization', who.token).then((r) => ({ who, r }));
      }),
    );
    for (const { who, r } of responses) {
      expect(r.status).toBe(200);
      const ids = (r.body.boards as Array<{ board_id: string }>).map((x) => x.board_id);
      expect(ids.length).toBeGreaterThan(0);
      for (const id of ids) expect((who === a ? ownA : ownB).has(id)).toBe(true);
    }
  });

  it('decisions stay correct through the pooler: from the database without SERVICE_DATABASE_LISTEN_URL, from memory with it', async () => {
    // LISTEN needs a session connection: the direct URL carries it; the pooled one never does.
    const direct = await startTestApp(
      { SERVICE_DATABASE_URL: bouncer.via(fresh.url), SERVICE_DATABASE_LISTEN_URL: fresh.url, SERVICE_MULTI_TENANT_MODE: 'true', SERVICE_DATABASE_PREPARED_STATEMENTS: 'false' },
      { poolMax: 4 },
    );
    try {
      expect(t.services.decisionMemory?.mode).toBe('pooler_without_listen_url');
      expect(direct.services.decisionMemory?.mode).toBe('on');
      const admin = `Bearer ${adminToken()}`;
      const slug = unique('pooldec');
      await request(t.app).post('/api/setup/tenant').set('Authorization', admin).send({ name: slug, slug }).expect(201);
      const subjects = [unique('m'), unique('m')];
      // Provisioned by a claim once; then named by the header alone, so a removed member is not provisioned again.
      const ids: string[] = [];
      for (const sub of subjects) {
        const first = await request(t.app).get('/api/tenant/decision').set('Authorization', `Bearer ${tokenFor({ sub, claims: { tenant: slug } })}`).expect(200);
        ids.push(first.headers['x-user-id'] as string);
      }
      const tokens = subjects.map((sub) => `Bearer ${tokenFor({ sub })}`);
      const decide = (app: TestApp, tok: string) => request(app.app).get('/api/tenant/decision').set('Authorization', tok).set('X-Tenant', slug);
      while (direct.services.decisionMemory?.facts?.state !== 'listening') await new Promise((r) => setTimeout(r, 20));
      for (const tok of tokens) for (let i = 0; i < 2; i++) await decide(direct, tok).expect(200);
      const held = direct.services.decisionMemory!.facts!.size;
      expect(held).toBeGreaterThan(0);
      // Removed through the memory-less app: the direct-listening one honours it once notified.
      await request(t.app).delete(`/api/tenant/members/${ids[0]}`).set('Authorization', admin).set('X-Tenant', slug).expect(204);
      while ((await decide(direct, tokens[0]!)).status !== 403) await new Promise((r) => setTimeout(r, 10));
      // Removed through the listening app: the memory-less one answers from the database at once.
      await request(direct.app).delete(`/api/tenant/members/${ids[1]}`).set('Authorization', admin).set('X-Tenant', slug).expect(204);
      await decide(t, tokens[1]!).expect(403);
      await decide(direct, tokens[1]!).expect(403);
    } finally {
      await direct.close();
    }
  });
});
