/**
 * Load: autocannon (loopback, 16 connections) sends a mix of reads and writes to a listening
 * server: tenant-scoped reads, board writes, member listing, and platform-admin tenant creation
 * and listing. Zero 5xx, zero errors or timeouts, every answer 2xx; afterwards the rows written
 * are exactly the 201s counted (none lost, none duplicated).
 *
 * Bounded by a request count (LOAD_REQUESTS, default 2000: about ten seconds here) rather than a
 * duration, because a duration cuts requests in flight: their rows commit but their 201s are
 * never counted, and the exact row check could not be made. The 30 s duration version is a
 * scenario of `npm run bench`.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import autocannon from 'autocannon';
import { startTestApp, type TestApp } from '../helpers/app';
import { adminToken, closeOwnerConnection, ownerConnection, tenantWithMember, unique } from '../helpers/factories';

const REQUESTS = Number(process.env.LOAD_REQUESTS ?? 2000);
jest.setTimeout(120_000);

let t: TestApp;
let server: http.Server;
let port: number;

beforeAll(async () => {
  t = await startTestApp({ SERVICE_MULTI_TENANT_MODE: 'true' }, { poolMax: 10 });
  server = http.createServer(t.app);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  port = (server.address() as AddressInfo).port;
});

afterAll(async () => {
  await new Promise<void>((r) => server.close(() => r()));
  await t.close();
  await closeOwnerConnection();
});

async function count(table: string, where: (qb: ReturnType<ReturnType<typeof ownerConnection>>) => unknown): Promise<number> {
  const qb = ownerConnection()(table);
  where(qb);
  const [row] = await qb.count<{ count: string }[]>('* as count');
  return Number(row!.count);
}

describe('mixed reads and writes under load', () => {
  it('answers only 2xx and loses or duplicates no row', async () => {
    const { tenant, token } = await tenantWithMember('admin');
    const member = { Authorization: `Bearer ${token}`, 'X-Tenant': tenant.slug, 'Content-Type': 'application/json' };
    const admin = { Authorization: `Bearer ${adminToken()}`, 'Content-Type': 'application/json' };
    const prefix = unique('load');
    const first = await fetch(`http://127.0.0.1:${port}/api/boards`, { method: 'POST', headers: member, body: JSON.stringify({ name: 'first' }) });
    const boardId = ((await first.json()) as { board_id: string }).board_id;
    const boardsBefore = await count('boards', (q) => q.where({ tenant_id: tenant.id }));

    let n = 0;
    let b = 0;
    const statuses = new Map<number, number>();
    const run = autocannon({
      url: `http://127.0.0.1:${port}`,
      connections: 16,
      amount: REQUESTS,
      timeout: 20,
      requests: [
        { method: 'GET', path: '/api/tenant', headers: member },
        {
          method: 'POST',
          path: '/api/boards',
          headers: member,
          setupRequest: (req: Record<string, unknown>) => ({ ...req, body: JSON.stringify({ name: `${prefix} board ${++b}`, description: 'x'.repeat(100) }) }),
        },
        { method: 'GET', path: '/api/boards?limit=50', headers: member },
        { method: 'GET', path: `/api/boards/${boardId}`, headers: member },
        { method: 'GET', path: '/api/tenant/members', headers: member },
        {
          method: 'POST',
          path: '/api/setup/tenant',
          headers: admin,
          // A fresh slug per request: each 201 must be exactly one tenant row.
          setupRequest: (req: Record<string, unknown>) => ({ ...req, body: JSON.stringify({ name: 'Load tenant', slug: `${prefix}-${++n}` }) }),
        },
        { method: 'GET', path: `/api/setup/tenants?limit=20&q=${prefix}`, headers: admin },
      ],
    });
    run.on('response', (_c, status) => statuses.set(status, (statuses.get(status) ?? 0) + 1));
    const result = await run;

    const total = [...statuses.values()].reduce((a, b) => a + b, 0);
    expect(total).toBe(REQUESTS);
    expect(Object.fromEntries(statuses)).toEqual(Object.fromEntries([...statuses].filter(([s]) => s >= 200 && s < 300)));
    expect({ errors: result.errors, timeouts: result.timeouts, '5xx': result['5xx'], non2xx: result.non2xx }).toEqual({ errors: 0, timeouts: 0, '5xx': 0, non2xx: 0 });

    // Every 201 is one row: the boards of the tenant plus the tenants with the prefix.
    const boardsCreated = (await count('boards', (q) => q.where({ tenant_id: tenant.id }))) - boardsBefore;
    const tenantsCreated = await count('tenants', (q) => q.whereLike('slug', `${prefix}-%`));
    expect(boardsCreated + tenantsCreated).toBe(statuses.get(201) ?? 0);
    expect(boardsCreated).toBeGreaterThan(0);
    expect(tenantsCreated).toBeGreaterThan(0);
    // Each board name was sent once: none is stored twice, none under another tenant.
    const dupes = await ownerConnection()('boards').whereLike('name', `${prefix} board %`).groupBy('name').havingRaw('count(*) > 1').select('name');
    expect(dupes).toEqual([]);
    expect(await count('boards', (q) => q.whereLike('name', `${prefix} board %`).whereNot({ tenant_id: tenant.id }))).toBe(0);
    expect(boardsCreated).toBeLessThanOrEqual(b);
    expect(tenantsCreated).toBeLessThanOrEqual(n);
    expect(t.logs.filter((l) => (l.status as number) >= 500 || l.msg === 'Unhandled error')).toEqual([]);
  });
});
