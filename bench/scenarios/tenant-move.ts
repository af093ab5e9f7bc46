/**
 * Moving a large tenant (docs/operations.md#moving-a-tenant-between-deployments): the export
 * of a tenant of `rows` rows (a million in the full bench; BENCH_MOVE_ROWS sets it) to a file,
 * then, after the tenant is deleted, its import from that file, on a service in its own process.
 * For each: the time, the service process's peak memory above its idle memory (goal < 100 MiB;
 * sampled every 100 ms), and another tenant's decision p99 during it against its quiet p99
 * (goal ≤ 3×).
 */
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import type { Knex } from 'knex';
import type { BenchContext } from './types';
import { startServerProcess, type ServerProcess } from './server-process';

const MIB = 1024 * 1024;
/** Connections of the other tenant's decision load: a steady caller, not a flood. */
const OTHER_CONNECTIONS = 4;

/** Rows of one tenant across its tables, with valid references, in the proportions of a busy tenant. */
async function seedTenant(owner: Knex, tenantId: string, rows: number): Promise<Record<string, number>> {
  const users = Math.max(1, Math.round(rows * 0.01));
  const boards = Math.max(1, Math.round(rows * 0.1));
  const credits = Math.max(1, Math.round(rows * 0.1));
  const generations = Math.max(1, rows - users - boards * 2 - credits);
  await owner.transaction(async (trx) => {
    await trx.raw(`insert into users (tenant_id, issuer, subject, email, role) select ?, 'urn:bench', 'mover-' || g, 'mover-' || g || '@bench.test', 'member' from generate_series(1, ?) g`, [tenantId, users]);
    await trx.raw('create temp table move_users on commit drop as select row_number() over (order by id) as n, id from users where tenant_id = ?', [tenantId]);
    await trx.raw(`insert into boards (tenant_id, name, created_by) select ?, 'Board ' || g, (select id from move_users where n = 1 + g % ?) from generate_series(1, ?) g`, [tenantId, users, boards]);
    await trx.raw('create temp table move_boards on commit drop as select row_number() over (order by id) as n, id from boards where tenant_id = ?', [tenantId]);
    await trx.raw('create index on move_boards (n)');
    await trx.raw('create index on move_users (n)');
    await trx.raw(`insert into board_members (tenant_id, board_id, user_id) select ?, b.id, u.id from move_boards b join move_users u on u.n = 1 + b.n % ?`, [tenantId, users]);
    await trx.raw(
      `insert into generations (tenant_id, board_id, prompt, media_url, media_type)
       select ?, b.id, 'prompt ' || g, 'https://media.example.test/' || g || '.png', 'image/png' from generate_series(1, ?) g join move_boards b on b.n = 1 + g % ?`,
      [tenantId, generations, boards],
    );
    await trx.raw(`insert into credit_transactions (tenant_id, kind, amount, balance_after) select ?, 'grant', 10, 10 * g from generate_series(1, ?) g order by g`, [tenantId, credits]);
  });
  await owner.raw('analyze');
  return { users, boards, board_members: boards, generations, credit_transactions: credits };
}

/** The process's peak RSS while `work` runs, sampled every 100 ms. */
async function peakRss<T>(server: ServerProcess, work: () => Promise<T>): Promise<{ result: T; peak: number }> {
  let peak = await server.rssBytes();
  let running = true;
  const sampler = (async () => {
    while (running) {
      peak = Math.max(peak, await server.rssBytes());
      await new Promise((r) => setTimeout(r, 100));
    }
  })();
  try {
    return { result: await work(), peak };
  } finally {
    running = false;
    await sampler;
  }
}

/** The other tenant's decision latency while `work` runs. */
async function decisionP99During<T>(url: string, headers: Record<string, string>, work: () => Promise<T>): Promise<{ result: T; p99: number; requests: number; non2xx: number }> {
  const instance = autocannon({ url, connections: OTHER_CONNECTIONS, duration: 3600, headers, timeout: 30 });
  let result: T;
  try {
    result = await work();
  } finally {
    instance.stop();
  }
  const r = await instance;
  return { result: result!, p99: r.latency.p99, requests: r.requests.total, non2xx: r.non2xx };
}

function request(port: number, method: string, urlPath: string, headers: Record<string, string>, body?: fs.ReadStream): Promise<{ status: number; bytes: number; text: string; res: http.IncomingMessage }> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method, path: urlPath, headers }, (res) => {
      let bytes = 0;
      let text = '';
      res.on('data', (c: Buffer) => {
        bytes += c.length;
        if (text.length < 4096) text += c.toString('utf8');
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, bytes, text, res }));
      res.on('error', reject);
    });
    req.on('error', reject);
    if (body) body.pipe(req);
    else req.end();
  });
}

export interface TenantMoveResult {
  rows: number;
  rows_per_table: Record<string, number>;
  quiet_decision_p99_ms: number;
  export: { status: number; ms: number; bytes: number; peak_rss_above_idle_mib: number; other_tenant_decision_p99_ms: number; p99_ratio: number };
  import: { status: number; ms: number; error?: string; peak_rss_above_idle_mib: number; other_tenant_decision_p99_ms: number; p99_ratio: number };
  targets: { imported: boolean; memory_under_100_mib: boolean; other_tenant_p99_ratio_at_most_3: boolean };
}

export async function tenantMoveScenario(ctx: BenchContext, opts: { owner: Knex; admin: Record<string, string>; rows: number }): Promise<TenantMoveResult> {
  const { log } = ctx;
  const server = await startServerProcess('service', ctx.serviceEnv);
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'tenant-move-')), 'move.ndjson');
  try {
    const slug = `move-co-${Date.now()}`;
    const make = await fetch(`http://127.0.0.1:${server.port}/api/setup/tenant`, { method: 'POST', headers: { ...opts.admin, 'Content-Type': 'application/json' }, body: JSON.stringify({ name: 'Move Co', slug }) });
    if (make.status !== 201) throw new Error(`createTenant answered ${make.status}`);
    const tenantId = ((await make.json()) as { tenant_id: string }).tenant_id;
    log(`seeding ${opts.rows} rows into ${slug}`);
    const perTable = await seedTenant(opts.owner, tenantId, opts.rows);
    const total = Object.values(perTable).reduce((a, b) => a + b, 0);
    const decisionUrl = `http://127.0.0.1:${server.port}/api/tenant/decision`;

    // A fresh process: its first seconds measure V8 compiling the decision's path, not the quiet p99.
    log('warm-up (not counted): another tenant\'s decision (3 s)');
    await decisionP99During(decisionUrl, ctx.member, () => new Promise((r) => setTimeout(r, 3000)));
    log('quiet: another tenant\'s decision p99 (5 s)');
    const quiet = await decisionP99During(decisionUrl, ctx.member, () => new Promise((r) => setTimeout(r, 5000)));
    const idle = await server.rssBytes();

    log(`export: GET /api/setup/tenant/{${slug}}/export`);
    const exp = await decisionP99During(decisionUrl, ctx.member, () =>
      peakRss(server, async () => {
        const started = Date.now();
        const out = fs.createWriteStream(file);
        const r = await new Promise<{ status: number; bytes: number }>((resolve, reject) => {
          http
            .get({ host: '127.0.0.1', port: server.port, path: `/api/setup/tenant/${tenantId}/export`, headers: opts.admin }, (res) => {
              let bytes = 0;
              res.on('data', (c: Buffer) => (bytes += c.length));
              res.pipe(out);
              out.on('finish', () => resolve({ status: res.statusCode ?? 0, bytes }));
              res.on('error', reject);
            })
            .on('error', reject);
        });
        return { ...r, ms: Date.now() - started };
      }),
    );
    log(`  ${exp.result.result.status}, ${(exp.result.result.bytes / MIB).toFixed(1)} MiB in ${exp.result.result.ms} ms`);

    const del = await fetch(`http://127.0.0.1:${server.port}/api/setup/tenant/${tenantId}`, { method: 'DELETE', headers: opts.admin });
    if (del.status !== 200) throw new Error(`deleteTenant answered ${del.status}`);
    const idleBeforeImport = await server.rssBytes();

    log('import: POST /api/setup/tenants/import');
    const imp = await decisionP99During(decisionUrl, ctx.member, () =>
      peakRss(server, async () => {
        const started = Date.now();
        // A failed import is a figure too (how long it ran, what ended it), not the end of the run.
        try {
          const r = await request(server.port, 'POST', '/api/setup/tenants/import', { ...opts.admin, 'Content-Type': 'application/x-ndjson', 'Content-Length': String(fs.statSync(file).size) }, fs.createReadStream(file));
          return { status: r.status, ms: Date.now() - started, ...(r.status === 201 ? {} : { error: r.text.slice(0, 500) }) };
        } catch (err) {
          return { status: 0, ms: Date.now() - started, error: `the connection ended before an answer: ${err instanceof Error ? err.message : String(err)}` };
        }
      }),
    );
    log(`  ${imp.result.result.status} in ${imp.result.result.ms} ms${imp.result.result.error ? ` (${imp.result.result.error})` : ''}`);

    const ratio = (p99: number) => Math.round((p99 / Math.max(quiet.p99, 0.001)) * 100) / 100;
    const exportPeak = (exp.result.peak - idle) / MIB;
    const importPeak = (imp.result.peak - idleBeforeImport) / MIB;
    return {
      rows: total,
      rows_per_table: perTable,
      quiet_decision_p99_ms: quiet.p99,
      export: {
        status: exp.result.result.status,
        ms: exp.result.result.ms,
        bytes: exp.result.result.bytes,
        peak_rss_above_idle_mib: Math.round(exportPeak * 10) / 10,
        other_tenant_decision_p99_ms: exp.p99,
        p99_ratio: ratio(exp.p99),
      },
      import: { status: imp.result.result.status, ms: imp.result.result.ms, ...(imp.result.result.error ? { error: imp.result.result.error } : {}), peak_rss_above_idle_mib: Math.round(importPeak * 10) / 10, other_tenant_decision_p99_ms: imp.p99, p99_ratio: ratio(imp.p99) },
      targets: { imported: imp.result.result.status === 201, memory_under_100_mib: exportPeak < 100 && importPeak < 100, other_tenant_p99_ratio_at_most_3: ratio(exp.p99) <= 3 && ratio(imp.p99) <= 3 },
    };
  } finally {
    await server.stop();
    fs.rmSync(path.dirname(file), { recursive: true, force: true });
  }
}
