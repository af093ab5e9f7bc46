/**
 * Every table `app_tenant_facts` reads notifies the decision facts channel on every kind of
 * write (docs/architecture.md "Decisions from memory"): a table added to the facts without its
 * trigger fails here, before any instance can answer a stale decision.
 */
import { Client } from 'pg';
import { testDatabaseUrl } from '../helpers/app';
import { closeOwnerConnection, createTenant, createUser, ownerConnection } from '../helpers/factories';
import { DECISION_FACTS_CHANNEL } from '../../src/db/fact-notifications';

afterAll(closeOwnerConnection);

/** The public tables named in the source of app_tenant_facts. */
async function tablesTheFactsRead(): Promise<string[]> {
  const db = ownerConnection();
  const src = (await db.raw<{ rows: Array<{ prosrc: string }> }>(`select prosrc from pg_proc where proname = 'app_tenant_facts'`)).rows;
  expect(src).toHaveLength(1);
  const tables = (await db.raw<{ rows: Array<{ t: string }> }>(`select tablename as t from pg_tables where schemaname = 'public'`)).rows.map((r) => r.t);
  const words = new Set(src[0]!.prosrc.toLowerCase().match(/[a-z_][a-z0-9_]*/g));
  return tables.filter((t) => words.has(t)).sort();
}

test('the facts read tenants, users and identity links at least', async () => {
  expect(await tablesTheFactsRead()).toEqual(expect.arrayContaining(['identity_links', 'tenants', 'users']));
});

test('every table the facts read has the notify trigger for insert, update, delete and truncate', async () => {
  const db = ownerConnection();
  const missing: string[] = [];
  for (const table of await tablesTheFactsRead()) {
    const { rows } = await db.raw<{ rows: Array<{ ins: boolean; upd: boolean; del: boolean; trunc: boolean }> }>(
      `select bool_or(tgtype & 4 <> 0) as ins, bool_or(tgtype & 16 <> 0) as upd, bool_or(tgtype & 8 <> 0) as del, bool_or(tgtype & 32 <> 0) as trunc
         from pg_trigger t join pg_proc p on p.oid = t.tgfoid
        where t.tgrelid = ?::regclass and p.proname = 'app_notify_decision_facts' and t.tgenabled <> 'D'`,
      [table],
    );
    const r = rows[0]!;
    for (const [op, on] of [['insert', r.ins], ['update', r.upd], ['delete', r.del], ['truncate', r.trunc]] as const) if (!on) missing.push(`${table}: ${op}`);
  }
  expect(missing).toEqual([]);
});

test('a committed write notifies its tenant, a rolled-back one nothing', async () => {
  const listener = new Client({ connectionString: testDatabaseUrl() });
  await listener.connect();
  const heard: string[] = [];
  listener.on('notification', (m) => {
    if (!m.payload?.startsWith('heartbeat')) heard.push(m.payload!.split(' ')[0]!);
  });
  try {
    await listener.query(`LISTEN ${DECISION_FACTS_CHANNEL}`);
    const db = ownerConnection();
    // A marker after the writes: notifications arrive in commit order.
    let markers = 0;
    const settled = async () => {
      const n = ++markers;
      await db.raw('select pg_notify(?, ?)', [DECISION_FACTS_CHANNEL, `marker${n} 0`]);
      await new Promise<void>((resolve) => {
        const check = () => (heard.includes(`marker${n}`) ? resolve() : setTimeout(check, 10));
        check();
      });
    };
    const tenant = await createTenant();
    const user = await createUser(tenant.id);
    await settled();
    expect(heard.filter((h) => h === tenant.id).length).toBeGreaterThanOrEqual(2);
    heard.length = 0;
    await db
      .transaction(async (trx) => {
        await trx.raw('update users set role = ? where id = ?', ['admin', user.id]);
        throw new Error('rollback');
      })
      .catch(() => undefined);
    await settled();
    expect(heard.filter((h) => h === tenant.id)).toEqual([]);
    await db.raw('update users set role = ? where id = ?', ['admin', user.id]);
    await settled();
    expect(heard.filter((h) => h === tenant.id)).toEqual([tenant.id]);
  } finally {
    await listener.end();
  }
});
