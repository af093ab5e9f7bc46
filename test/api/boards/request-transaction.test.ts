/**
 * The request transaction (src/db/request-transaction.ts): BEGIN, the entering statement, the
 * handler's statements and COMMIT on one pooled connection driven through pg, with a knex
 * instance bound to it for the models. What knex's own transactions guarantee must hold here
 * too: commit on success, rollback on any throw, savepoints, no statement on a connection after
 * its transaction ended (it may already serve another request), and a broken connection never
 * returns to the pool.
 */
import type { Knex } from 'knex';
import { openDatabase } from '../../../src/db/database';
import { BoardRow } from '../../../src/db/models';
import { readTenantFacts } from '../../../src/db/queries/enter-tenant';
import { queryRows, runStatement, withRequestTransaction } from '../../../src/db/request-transaction';
import { withSavepoint } from '../../../src/db/tenant-scope';
import { testRuntimeDatabaseUrl } from '../../helpers/app';
import { closeOwnerConnection, createTenant, ownerConnection, unique } from '../../helpers/factories';

let db: Knex;
let tenantId: string;
beforeAll(async () => {
  // One connection: every transaction below reuses it, so leftovers of one would show in the next.
  db = openDatabase({ url: testRuntimeDatabaseUrl(), poolMax: 1 });
  tenantId = (await createTenant()).id;
});
afterAll(async () => {
  await db.destroy();
  await closeOwnerConnection();
});

/** A request transaction entered into the test tenant (what app_tenant_facts sets). */
function inTenant<T>(fn: (trx: Knex.Transaction) => Promise<T>): Promise<T> {
  return withRequestTransaction(
    db,
    (connection) => runStatement(connection, "select set_config('app.tenant_id', $1, true)", [tenantId]),
    (_first, trx) => fn(trx),
  );
}

const boardsNamed = async (name: string) => (await ownerConnection()('boards').where({ tenant_id: tenantId, name })).length;
const insertBoard = (trx: Knex.Transaction, name: string) => BoardRow.query(trx).insert({ tenant_id: tenantId, name, description: null, created_by: null });

it('commits what the models and plain statements wrote when the function resolves', async () => {
  const name = unique('committed');
  const seen = await inTenant(async (trx) => {
    await insertBoard(trx, name);
    return queryRows<{ name: string }>(trx, 'select name from boards where name = $1', [name]);
  });
  expect(seen).toEqual([{ name }]);
  expect(await boardsNamed(name)).toBe(1);
});

it('rolls back everything when the function throws, and leaves no tenant setting on the connection', async () => {
  const name = unique('rolled-back');
  const failure = new Error('handler failed');
  await expect(
    inTenant(async (trx) => {
      await insertBoard(trx, name);
      throw failure;
    }),
  ).rejects.toBe(failure);
  expect(await boardsNamed(name)).toBe(0);
  // The same (only) pooled connection, outside any request transaction.
  const [setting] = await db.raw<{ rows: Array<{ t: string | null }> }>("select nullif(current_setting('app.tenant_id', true), '') as t").then((r) => r.rows);
  expect(setting!.t).toBeNull();
});

it('refuses any statement on the transaction after it ended, so nothing runs on a pooled connection', async () => {
  const name = unique('late');
  let leaked: Knex.Transaction | null = null;
  await inTenant(async (trx) => {
    leaked = trx;
  });
  // knex's own refusal ("Transaction query already complete") for the builder and the models.
  await expect(insertBoard(leaked!, name)).rejects.toThrow(/already (ended|complete)/);
  await expect(queryRows(leaked!, 'select 1', [])).rejects.toThrow(/already (ended|complete)/);
  await expect(leaked!.raw('select 1')).rejects.toThrow(/already (ended|complete)/);
  expect(await boardsNamed(name)).toBe(0);
});

it('refuses commit and rollback by hand (the pipeline ends the transaction)', async () => {
  await inTenant(async (trx) => {
    await expect(trx.commit()).rejects.toThrow(/committed by the pipeline/);
    await expect(trx.rollback()).rejects.toThrow(/rolled back by the pipeline/);
  });
});

it('rolls back a failed savepoint only, and commits the rest', async () => {
  const kept = unique('kept');
  const undone = unique('undone');
  await inTenant(async (trx) => {
    await insertBoard(trx, kept);
    await expect(
      withSavepoint(trx, async (sp) => {
        await insertBoard(sp, undone);
        throw new Error('inner');
      }),
    ).rejects.toThrow('inner');
    expect(await queryRows(trx, 'select 1 from boards where name = $1', [undone])).toEqual([]);
  });
  expect(await boardsNamed(kept)).toBe(1);
  expect(await boardsNamed(undone)).toBe(0);
});

it('destroys a connection whose server went away mid-transaction, and the pool goes on', async () => {
  const name = unique('orphan');
  await expect(
    inTenant(async (trx) => {
      await insertBoard(trx, name);
      const [{ pid }] = (await queryRows<{ pid: number }>(trx, 'select pg_backend_pid() as pid', [])) as [{ pid: number }];
      await ownerConnection().raw('select pg_terminate_backend(?, 5000)', [pid]); // waits until it is gone
      await queryRows(trx, 'select 1', []);
    }),
  ).rejects.toThrow();
  expect(await boardsNamed(name)).toBe(0);
  // The next request gets a working connection (the broken one was not handed out again).
  const again = unique('after');
  await inTenant(async (trx) => insertBoard(trx, again));
  expect(await boardsNamed(again)).toBe(1);
});

it('fails the request when COMMIT fails (the server went away after the handler), and the pool goes on', async () => {
  const name = unique('uncommitted');
  await expect(
    inTenant(async (trx) => {
      await insertBoard(trx, name);
      const [{ pid }] = (await queryRows<{ pid: number }>(trx, 'select pg_backend_pid() as pid', [])) as [{ pid: number }];
      // The handler itself succeeds; the connection dies before its COMMIT.
      await ownerConnection().raw('select pg_terminate_backend(?, 5000)', [pid]); // waits until it is gone
    }),
  ).rejects.toThrow();
  expect(await boardsNamed(name)).toBe(0);
  const again = unique('after-commit-failure');
  await inTenant(async (trx) => insertBoard(trx, again));
  expect(await boardsNamed(again)).toBe(1);
});

it('closes a connection whose statement outlived the client-side query timeout, instead of reusing it', async () => {
  // The only connection of this pool; its statement keeps running on the server after the timeout.
  const pool = openDatabase({ url: testRuntimeDatabaseUrl(), poolMax: 1, statementTimeoutMs: 20_000, queryTimeoutMs: 300 });
  try {
    let firstPid = 0;
    await expect(
      withRequestTransaction(
        pool,
        async () => undefined,
        async (_first, trx) => {
          firstPid = (await queryRows<{ pid: number }>(trx, 'select pg_backend_pid() as pid', []))[0]!.pid;
          await queryRows(trx, 'select pg_sleep(15)', []);
        },
      ),
    ).rejects.toThrow(/Query read timeout/);
    const nextPid = await withRequestTransaction(
      pool,
      async () => undefined,
      async (_first, trx) => (await queryRows<{ pid: number }>(trx, 'select pg_backend_pid() as pid', []))[0]!.pid,
    );
    expect(firstPid).toBeGreaterThan(0);
    expect(nextPid).not.toBe(firstPid);
  } finally {
    await pool.destroy();
  }
  // The abandoned backend is not left sleeping on the server.
  await ownerConnection().raw("select pg_cancel_backend(pid) from pg_stat_activity where query = 'select pg_sleep(15)'");
});

it('queryRows runs only on an open transaction, never on the pool', async () => {
  await expect(queryRows(db as unknown as Knex.Transaction, 'select 1', [])).rejects.toThrow(/open transaction/);
  // On a knex transaction it runs on that transaction's connection.
  const rows = await db.transaction(async (trx) => {
    await trx.raw("select set_config('app.probe', 'inside', true)");
    return queryRows<{ v: string }>(trx, "select current_setting('app.probe') as v", []);
  });
  expect(rows).toEqual([{ v: 'inside' }]);
});

describe('prepared statements', () => {
  const prepared = async (pool: Knex) => (await pool.raw<{ rows: Array<{ name: string }> }>('select name from pg_prepared_statements order by name')).rows.map((r) => r.name);
  const enter = (pool: Knex, slug: string) =>
    readTenantFacts(pool, { slug, issuer: 'iss', subject: unique('prep') });

  it('enters a tenant through a statement prepared once per connection', async () => {
    const pool = openDatabase({ url: testRuntimeDatabaseUrl(), poolMax: 1, preparedStatements: true });
    try {
      const slug = (await ownerConnection()('tenants').where({ id: tenantId }).first<{ slug: string }>('slug'))!.slug;
      expect((await enter(pool, slug))?.tenant.id).toBe(tenantId);
      expect((await enter(pool, slug))?.tenant.id).toBe(tenantId);
      expect(await prepared(pool)).toContain('tenant_service_enter_tenant_v5');
    } finally {
      await pool.destroy();
    }
  });

  it('prepares nothing with preparedStatements: false (PgBouncer before 1.21 in transaction mode)', async () => {
    const pool = openDatabase({ url: testRuntimeDatabaseUrl(), poolMax: 1, preparedStatements: false });
    try {
      const slug = (await ownerConnection()('tenants').where({ id: tenantId }).first<{ slug: string }>('slug'))!.slug;
      expect((await enter(pool, slug))?.tenant.id).toBe(tenantId);
      expect(await prepared(pool)).toEqual([]);
    } finally {
      await pool.destroy();
    }
  });
});
