/**
 * What recording events costs (docs/events.md#webhooks): the mixed read/write load of bench/run.ts
 * (GET /api/tenant, GET /api/boards, POST /api/boards, GET /api/tenant/members at 32 connections)
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
 *
 * Then the largest reads of the log (`large_reads`): a log of BENCH_EVENTS_LOG_SIZE maximal
 * events (16 KiB of data each) plus a few 1 MiB ones stored before data was bounded; another
 * tenant's GET /api/boards p99 is measured quietly, then while a platform admin pages through
 * the whole log with `GET /api/setup/events?limit=1000`. Reported as the ratio of the two p99s
 * (target ≤ 3), each phase BENCH_EVENTS_READ_SECONDS long (default 10).
 * BENCH_EVENTS_ONLY=reads (standalone only) skips the recording-cost part.
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
  large_reads: LargeReadsResult;
}

/** Another tenant's latency while the largest pages of the event log are read. */
export interface LargeReadsResult {
  events_in_log: number;
  huge_events_stored_before_the_bound: number;
  reader_connections: number;
  pages_read: number;
  largest_page_bytes: number;
  reads_non_200: number;
  other_tenant_requests_quiet: number;
  other_tenant_requests_during_reads: number;
  other_tenant_p99_ms_quiet: number;
  other_tenant_p99_ms_during_reads: number;
  /** during / quiet: what the largest reads cost everyone else. */
  other_tenant_p99_ratio: number;
  /** The service thread's event-loop delay in each phase: how long one request could stall all others. */
  service_event_loop_delay_quiet: LoopDelay;
  service_event_loop_delay_during_reads: LoopDelay;
  target_ratio_at_most_3: boolean;
}

interface BenchService {
  port: number;
  stop: () => Promise<void>;
  /** The service thread's event-loop delay since the last call. */
  loopDelay: () => Promise<LoopDelay>;
}

interface LoopDelay {
  p99_ms: number;
  max_ms: number;
}

function startService(env: Record<string, string>, recordEvents: boolean): Promise<BenchService> {
  const worker = new Worker(path.join(__dirname, 'events-server.js'), { workerData: { env, recordEvents } });
  return new Promise((resolve, reject) => {
    worker.once('error', reject);
    worker.once('message', (m: { port?: number; error?: string }) => {
      if (m.error || !m.port) return reject(new Error(`service failed: ${m.error}`));
      resolve({
        port: m.port,
        stop: () => new Promise<void>((done) => (worker.once('exit', () => done()), worker.postMessage('stop'))),
        loopDelay: () =>
          new Promise<LoopDelay>((done) => {
            worker.once('message', (r: { loopDelay: LoopDelay }) => done(r.loopDelay));
            worker.postMessage('loop-delay');
          }),
      });
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

/**
 * One GET on a keep-alive agent: status, body size, milliseconds and the body's last 1 KiB
 * (where `next_cursor` is). The body is not kept or parsed: this thread also times the other
 * tenant's requests, and must not stall on 4 MiB pages itself.
 */
function timedGet(agent: http.Agent, port: number, urlPath: string, headers: Record<string, string>): Promise<{ status: number; bytes: number; ms: number; tail: string }> {
  const started = process.hrtime.bigint();
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method: 'GET', path: urlPath, headers, agent }, (res) => {
      let bytes = 0;
      let tail = Buffer.alloc(0);
      res.on('data', (c: Buffer) => {
        bytes += c.length;
        tail = Buffer.concat([tail, c.subarray(Math.max(0, c.length - 1024))]).subarray(-1024);
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, bytes, ms: Number(process.hrtime.bigint() - started) / 1e6, tail: tail.toString('utf8') }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** p99 of `times` (milliseconds, rounded to 0.01). */
function p99(times: number[]): number {
  const sorted = [...times].sort((a, b) => a - b);
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil(0.99 * sorted.length) - 1));
  return Math.round((sorted[i] ?? 0) * 100) / 100;
}

/** `concurrency` clients repeating GET `urlPath` for `seconds`; the latency of each request. */
async function sample(port: number, urlPath: string, headers: Record<string, string>, seconds: number, concurrency: number): Promise<number[]> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
  const times: number[] = [];
  const deadline = Date.now() + seconds * 1000;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (Date.now() < deadline) {
        const r = await timedGet(agent, port, urlPath, headers);
        if (r.status !== 200) throw new Error(`GET ${urlPath} answered ${r.status}`);
        times.push(r.ms);
      }
    }),
  );
  agent.destroy();
  return times;
}

const LARGE_READERS = 1;
const HUGE_EVENTS = 20;

/**
 * Another tenant's p99 quietly and while the whole log is read in the largest pages the API
 * gives (limit=1000, bounded to 4 MiB each), as a ratio.
 */
export async function benchLargeEventReads(input: EventsBenchInput, service: BenchService, log: (m: string) => void): Promise<LargeReadsResult> {
  const port = service.port;
  const logSize = Number(process.env.BENCH_EVENTS_LOG_SIZE ?? 5000);
  const seconds = Number(process.env.BENCH_EVENTS_READ_SECONDS ?? 10);
  const admin = { Authorization: `Bearer ${signLocalToken(input.keys, { sub: 'bench-events-reader', admin: true, ttlSeconds: 7200 })}` };
  const slug = `bench-events-log-${crypto.randomBytes(3).toString('hex')}`;
  const logTenant = await post(port, '/api/setup/tenant', admin, { name: 'Bench Events Log', slug });
  if (logTenant.status !== 201) throw new Error(`createTenant answered ${logTenant.status}`);
  const logTenantId = logTenant.body.tenant_id as string;
  const otherSlug = `bench-events-other-${crypto.randomBytes(3).toString('hex')}`;
  const other = await post(port, '/api/setup/tenant', admin, { name: 'Bench Events Other', slug: otherSlug, include_sample_data: true });
  if (other.status !== 201) throw new Error(`createTenant answered ${other.status}`);
  const otherMember = { Authorization: `Bearer ${signLocalToken(input.keys, { sub: 'bench-events-other', tenant: otherSlug, ttlSeconds: 7200 })}` };

  log(`large reads: seeding ${logSize} maximal events and ${HUGE_EVENTS} of 1 MiB`);
  // Maximal: {"blob":"…"} is 16 384 bytes, the most data an event can hold now.
  await input.owner.raw(
    `insert into events (id, occurred_at, action, tenant_id, actor_issuer, actor_subject, actor_email, actor_platform_admin, target_type, target_id, data)
     select gen_random_uuid(), now() - g * interval '1 millisecond', 'tenant.registered', ?, 'urn:bench', 'bench-registrant', 'registrant@bench.test', false,
            'tenant', ?, jsonb_build_object('blob', repeat('x', 16373))
       from generate_series(1, ?) g`,
    [logTenantId, logTenantId, logSize],
  );
  // What the log held before data was bounded: whole 1 MiB metadata copied into an event.
  await input.owner.raw(
    `insert into events (id, occurred_at, action, tenant_id, target_type, data)
     select gen_random_uuid(), now() - g * interval '3 millisecond', 'tenant.registered', ?, 'tenant',
            jsonb_build_object('registration', jsonb_build_object('metadata', jsonb_build_object('blob', repeat(md5(g::text), 32768))))
       from generate_series(1, ?) g`,
    [logTenantId, HUGE_EVENTS],
  );
  await input.owner.raw('analyze events');

  const otherPath = '/api/boards';
  await sample(port, otherPath, otherMember, 2, 4); // warm-up
  log(`large reads: ${otherSlug} GET ${otherPath}, quiet (${seconds} s, 4 connections)`);
  await service.loopDelay();
  const quiet = await sample(port, otherPath, otherMember, seconds, 4);
  const loopQuiet = await service.loopDelay();

  let stop = false;
  let pages = 0;
  let largest = 0;
  let non200 = 0;
  const readers = Array.from({ length: LARGE_READERS }, async () => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    let cursor: string | null = null;
    while (!stop) {
      const r = await timedGet(agent, port, `/api/setup/events?tenant_id=${logTenantId}&limit=1000${cursor ? `&cursor=${cursor}` : ''}`, admin);
      pages++;
      largest = Math.max(largest, r.bytes);
      if (r.status !== 200) {
        non200++;
        cursor = null;
        continue;
      }
      cursor = /"next_cursor":"([A-Za-z0-9_-]+)"\}$/.exec(r.tail)?.[1] ?? null;
    }
    agent.destroy();
  });
  log(`large reads: ${otherSlug} GET ${otherPath} while ${LARGE_READERS} platform admin(s) page through the log (limit=1000)`);
  const during = await sample(port, otherPath, otherMember, seconds, 4);
  const loopDuring = await service.loopDelay();
  stop = true;
  await Promise.all(readers);

  const quietP99 = p99(quiet);
  const duringP99 = p99(during);
  const ratio = Math.round((duringP99 / quietP99) * 100) / 100;
  log(`  other tenant p99 ${quietP99} ms quiet, ${duringP99} ms during the reads: ${ratio}× (target ≤ 3×); ${pages} pages read, largest ${largest} bytes`);
  log(`  service event-loop delay p99/max: quiet ${loopQuiet.p99_ms}/${loopQuiet.max_ms} ms, during the reads ${loopDuring.p99_ms}/${loopDuring.max_ms} ms`);
  return {
    events_in_log: logSize + HUGE_EVENTS,
    huge_events_stored_before_the_bound: HUGE_EVENTS,
    reader_connections: LARGE_READERS,
    pages_read: pages,
    largest_page_bytes: largest,
    reads_non_200: non200,
    other_tenant_requests_quiet: quiet.length,
    other_tenant_requests_during_reads: during.length,
    other_tenant_p99_ms_quiet: quietP99,
    other_tenant_p99_ms_during_reads: duringP99,
    other_tenant_p99_ratio: ratio,
    service_event_loop_delay_quiet: loopQuiet,
    service_event_loop_delay_during_reads: loopDuring,
    target_ratio_at_most_3: ratio <= 3,
  };
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
      large_reads: await benchLargeEventReads(input, on, log),
    };
    log(`  with events ${withRps} req/s, without ${withoutRps} req/s: recording costs ${(cost * 100).toFixed(1)}% (median of rounds ${(medianCost * 100).toFixed(1)}%); at the same time ${concurrent.with_events_requests_per_s} vs ${concurrent.without_events_requests_per_s} req/s: ${(concurrent.cost * 100).toFixed(1)}%`);
    return result;
  } finally {
    await on.stop();
    await off.stop();
  }
}

/** The large-reads part on its own service (BENCH_EVENTS_ONLY=reads). */
async function largeReadsAlone(input: EventsBenchInput): Promise<LargeReadsResult> {
  const svc = await startService(
    { SERVICE_DATABASE_URL: input.dbUrl, SERVICE_DATA_DIR: input.dataDir, SERVICE_MULTI_TENANT_MODE: 'true', SERVICE_RATE_LIMIT_ENABLED: 'false', SERVICE_LOG_LEVEL: 'info' },
    true,
  );
  try {
    return await benchLargeEventReads(input, svc, (m) => process.stdout.write(`${m}\n`));
  } finally {
    await svc.stop();
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
    const input = { dbUrl: dbUrl.toString(), dataDir, keys: loadOrCreateLocalKeys(dataDir), owner };
    const result = process.env.BENCH_EVENTS_ONLY === 'reads' ? { large_reads: await largeReadsAlone(input) } : await benchEvents(input);
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
