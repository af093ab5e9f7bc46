/**
 * What recording events costs (issue 15): the mixed read/write load of bench/run.ts (GET
 * /api/tenant, GET /api/boards, POST /api/boards, GET /api/tenant/members at 32 connections)
 * against two instances of the service on one database, one recording events and one not,
 * alternated in rounds so machine drift hits both alike. An enabled webhook endpoint
 * subscribed to `*` is configured, so every recorded write also writes its outbox row (the
 * delivery worker is off, as in every bench run).
 *
 * Hooked into bench/run.ts with one line; also runs alone on a fresh database:
 *   npm run build && node dist/bench/scenarios/events.js
 * BENCH_EVENTS_DURATION: seconds of load per mode (default 30), split into 6 rounds each, in
 * ABBA order (off-on, on-off, …) so a steady drift of the machine cancels out. `cost` is from the
 * totals; `round_costs` (each pair's own cost) shows how noisy the machine was. Then both run at
 * the same time for BENCH_EVENTS_DURATION seconds (16 connections each): on a shared machine that
 * is the fairer comparison, and the ≤ 10% target is checked on it.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import autocannon from 'autocannon';
import knexFactory, { type Knex } from 'knex';
import pino from 'pino';
import { loadOrCreateLocalKeys, signLocalToken, type LocalKeys } from '../../src/auth/local-keys';
import { migrate } from '../../src/db/database';

const CONNECTIONS = 32;
const ROUNDS = 6;

export interface EventsBenchInput {
  /** The bench database (migrated). */
  dbUrl: string;
  /** Holds the local signing key the services verify tokens with. */
  dataDir: string;
  keys: LocalKeys;
  /** An owner connection, to count what was written. */
  owner: Knex;
  log?: (msg: string) => void;
}

export interface EventsBenchResult {
  duration_s_per_mode: number;
  rounds: number;
  connections: number;
  with_events_requests_per_s: number;
  without_events_requests_per_s: number;
  /** 1 − with / without: the share of throughput recording costs. */
  cost: number;
  /** Each round pair's own cost, and their median: on a busy machine the spread says how far to trust `cost`. */
  round_costs: number[];
  median_round_cost: number;
  /**
   * Both services loaded at the same time (16 connections each) for the same duration: whatever
   * else the machine does hits both alike, so this is the number the target is checked on.
   */
  concurrent: { with_events_requests_per_s: number; without_events_requests_per_s: number; cost: number };
  target_cost_at_most_0_10: boolean;
  with_events_5xx: number;
  without_events_5xx: number;
  boards_created_with_events: number;
  board_events_written: number;
  outbox_rows_written: number;
}

function startService(env: Record<string, string>, recordEvents: boolean): Promise<{ port: number; stop: () => Promise<void> }> {
  const worker = new Worker(path.join(__dirname, 'events-server.js'), { workerData: { env, recordEvents } });
  return new Promise((resolve, reject) => {
    worker.once('error', reject);
    worker.once('message', (m: { port?: number; error?: string }) => {
      if (m.error || !m.port) return reject(new Error(`service failed: ${m.error}`));
      resolve({ port: m.port, stop: () => new Promise<void>((done) => (worker.once('exit', () => done()), worker.postMessage('stop'))) });
    });
  });
}

function post(port: number, urlPath: string, headers: Record<string, string>, body: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
  const payload = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: '127.0.0.1', port, method: 'POST', path: urlPath, headers: { ...headers, 'Content-Type': 'application/json', 'Content-Length': String(Buffer.byteLength(payload)) } },
      (res) => {
        let text = '';
        res.on('data', (c: Buffer) => (text += c.toString('utf8')));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} }));
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

async function mixed(port: number, headers: Record<string, string>, seconds: number, connections = CONNECTIONS): Promise<{ requests: number; s5xx: number; created: number }> {
  let created = 0;
  const instance = autocannon({
    url: `http://127.0.0.1:${port}`,
    connections,
    duration: seconds,
    headers: { ...headers, 'Content-Type': 'application/json' },
    timeout: 30,
    requests: [
      { method: 'GET', path: '/api/tenant' },
      { method: 'GET', path: '/api/boards' },
      { method: 'POST', path: '/api/boards', body: JSON.stringify({ name: 'events bench' }) },
      { method: 'GET', path: '/api/tenant/members' },
    ],
  });
  instance.on('response', (_c, statusCode) => {
    if (statusCode === 201) created++;
  });
  const r = await instance;
  return { requests: r.requests.total, s5xx: r['5xx'], created };
}

/** Runs the scenario; returns the numbers for bench/results.json. */
export async function benchEvents(input: EventsBenchInput): Promise<EventsBenchResult> {
  const log = input.log ?? ((m: string) => process.stdout.write(`${m}\n`));
  const perMode = Number(process.env.BENCH_EVENTS_DURATION ?? 30);
  const round = Math.max(1, Math.round(perMode / ROUNDS));
  const env = {
    SERVICE_DATABASE_URL: input.dbUrl,
    SERVICE_DATA_DIR: input.dataDir,
    SERVICE_MULTI_TENANT_MODE: 'true',
    SERVICE_RATE_LIMIT_ENABLED: 'false',
    SERVICE_LOG_LEVEL: 'info',
  };
  const on = await startService(env, true);
  const off = await startService(env, false);
  try {
    const admin = { Authorization: `Bearer ${signLocalToken(input.keys, { sub: 'bench-events-admin', admin: true, ttlSeconds: 7200 })}` };
    const slug = `bench-events-${crypto.randomBytes(3).toString('hex')}`;
    const created = await post(on.port, '/api/setup/tenant', admin, { name: 'Bench Events', slug, include_sample_data: true });
    if (created.status !== 201) throw new Error(`createTenant answered ${created.status}`);
    const tenantId = created.body.tenant_id as string;
    const hook = await post(on.port, '/api/setup/webhooks', admin, { url: 'http://192.0.2.1:9/bench', events: ['*'] });
    if (hook.status !== 201) throw new Error(`createWebhook answered ${hook.status}`);
    const member = { Authorization: `Bearer ${signLocalToken(input.keys, { sub: 'bench-events-member', tenant: slug, ttlSeconds: 7200 })}` };
    for (let i = 0; i < 18; i++) await post(on.port, '/api/boards', member, { name: `Board ${i}` });

    const totals = { on: { requests: 0, s5xx: 0, created: 0 }, off: { requests: 0, s5xx: 0, created: 0 } };
    const eventsBefore = Number((await input.owner('events').where({ tenant_id: tenantId, action: 'board.created' }).count({ n: '*' }))[0]!.n);
    const roundCosts: number[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      const pair = { on: 0, off: 0 };
      for (const [mode, svc] of (i % 2 === 0 ? [['off', off], ['on', on]] : [['on', on], ['off', off]]) as Array<['on' | 'off', { port: number }]>) {
        log(`load: mixed, events ${mode} (round ${i + 1}/${ROUNDS}, ${round} s, ${CONNECTIONS} connections)`);
        const r = await mixed(svc.port, member, round);
        totals[mode].requests += r.requests;
        totals[mode].s5xx += r.s5xx;
        totals[mode].created += r.created;
        pair[mode] = r.requests;
        await new Promise((done) => setTimeout(done, 500)); // let requests cut at the end finish
      }
      roundCosts.push(Math.round((1 - pair.on / pair.off) * 1000) / 1000);
    }
    log(`load: mixed, events on and off at the same time (${perMode} s, ${CONNECTIONS / 2} connections each)`);
    const [bothOn, bothOff] = await Promise.all([mixed(on.port, member, perMode, CONNECTIONS / 2), mixed(off.port, member, perMode, CONNECTIONS / 2)]);
    await new Promise((done) => setTimeout(done, 500));
    const concurrent = {
      with_events_requests_per_s: Math.round(bothOn.requests / perMode),
      without_events_requests_per_s: Math.round(bothOff.requests / perMode),
      cost: Math.round((1 - bothOn.requests / bothOff.requests) * 1000) / 1000,
    };
    totals.on.s5xx += bothOn.s5xx;
    totals.off.s5xx += bothOff.s5xx;
    totals.on.created += bothOn.created;
    const sortedCosts = [...roundCosts].sort((a, b) => a - b);
    const medianCost = (sortedCosts[Math.floor((sortedCosts.length - 1) / 2)]! + sortedCosts[Math.ceil((sortedCosts.length - 1) / 2)]!) / 2;
    const eventsAfter = Number((await input.owner('events').where({ tenant_id: tenantId, action: 'board.created' }).count({ n: '*' }))[0]!.n);
    const outbox = Number((await input.owner('webhook_deliveries').where({ webhook_id: hook.body.webhook_id as string, event_type: 'board.created' }).count({ n: '*' }))[0]!.n);
    const seconds = round * ROUNDS;
    const withRps = Math.round(totals.on.requests / seconds);
    const withoutRps = Math.round(totals.off.requests / seconds);
    const cost = Math.round((1 - withRps / withoutRps) * 1000) / 1000;
    const result: EventsBenchResult = {
      duration_s_per_mode: seconds,
      rounds: ROUNDS,
      connections: CONNECTIONS,
      with_events_requests_per_s: withRps,
      without_events_requests_per_s: withoutRps,
      cost,
      round_costs: roundCosts,
      median_round_cost: Math.round(medianCost * 1000) / 1000,
      concurrent,
      target_cost_at_most_0_10: concurrent.cost <= 0.1,
      with_events_5xx: totals.on.s5xx,
      without_events_5xx: totals.off.s5xx,
      boards_created_with_events: totals.on.created,
      board_events_written: eventsAfter - eventsBefore,
      outbox_rows_written: outbox - 18,
    };
    log(`  with events ${withRps} req/s, without ${withoutRps} req/s: recording costs ${(cost * 100).toFixed(1)}% (median of rounds ${(medianCost * 100).toFixed(1)}%); at the same time ${concurrent.with_events_requests_per_s} vs ${concurrent.without_events_requests_per_s} req/s: ${(concurrent.cost * 100).toFixed(1)}%`);
    return result;
  } finally {
    await on.stop();
    await off.stop();
  }
}

/** Standalone: a fresh database, the scenario alone, the result printed. */
async function main(): Promise<void> {
  const adminUrl = process.env.BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const name = `tenant_service_bench_events_${Date.now()}_${crypto.randomBytes(3).toString('hex')}`;
  const dbUrl = new URL(adminUrl);
  dbUrl.pathname = `/${name}`;
  const root = knexFactory({ client: 'pg', connection: adminUrl, pool: { min: 0, max: 1 } });
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tenant-service-bench-events-'));
  let owner: Knex | null = null;
  try {
    await root.raw(`create database ${name}`);
    await migrate(dbUrl.toString(), 'default', pino({ level: 'silent' }));
    owner = knexFactory({ client: 'pg', connection: dbUrl.toString(), pool: { min: 0, max: 2 } });
    const result = await benchEvents({ dbUrl: dbUrl.toString(), dataDir, keys: loadOrCreateLocalKeys(dataDir), owner });
    process.stdout.write(`${JSON.stringify({ events: result }, null, 2)}\n`);
  } finally {
    await owner?.destroy();
    await root.raw(`drop database if exists ${name} with (force)`).catch(() => undefined);
    await root.destroy();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

if (require.main === module) {
  main().catch((err: unknown) => {
    process.stderr.write(`events bench failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  });
}
