/**
 * Revocation lag across three instances (docs/architecture.md "Decisions from memory"): three
 * service processes (the real entry point, server-process.ts) on the bench database, each under a
 * steady load of the bench member's decisions (BENCH_REVOCATION_CONNECTIONS per instance, default
 * 4). Each trial adds a member of bench-co, has instances B
 * and C answer its decision (200, so they hold it in memory), removes it through instance A
 * (`DELETE /api/tenant/members/{id}`, 204), and polls B and C with its decision: the lag of each is
 * the time from the removal's response to the start of the first request answered 403 (0 when the
 * first request after the response is already refused), as test/reliability/decision-memory-instances.test.ts
 * measures it. p50, p99 and the maximum over BENCH_REVOCATION_TRIALS trials (default 20, two lags
 * each); the bound is 1 s.
 */
import { performance } from 'node:perf_hooks';
import type { Knex } from 'knex';
import { LOCAL_ISSUER, signLocalToken, type LocalKeys } from '../../src/auth/local-keys';
import autocannon from 'autocannon';
import { startServerProcess, type ServerProcess } from './server-process';
import type { BenchContext } from './types';

const TRIALS = Number(process.env.BENCH_REVOCATION_TRIALS ?? 20);
const LOAD_CONNECTIONS = Number(process.env.BENCH_REVOCATION_CONNECTIONS ?? 4);
const BOUND_MS = 1_000;
/** A poll that has seen no refusal this long ends the run: the removal was not honoured. */
const GIVE_UP_MS = 30_000;

const percentile = (sorted: number[], p: number) => sorted[Math.max(0, Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1))]!;
const round2 = (x: number) => Math.round(x * 100) / 100;

async function status(s: ServerProcess, method: string, path: string, headers: Record<string, string>): Promise<number> {
  const r = await fetch(`http://127.0.0.1:${s.port}${path}`, { method, headers });
  await r.arrayBuffer();
  return r.status;
}

/** Polls the decision on `s` until it is refused; the lag from `changedAt` to that request's start. */
async function firstRefusal(s: ServerProcess, headers: Record<string, string>, changedAt: number): Promise<{ lag_ms: number; stale_answers: number }> {
  let stale = 0;
  for (;;) {
    const started = performance.now();
    const code = await status(s, 'GET', '/api/tenant/decision', headers);
    if (code === 403) return { lag_ms: round2(Math.max(0, started - changedAt)), stale_answers: stale };
    if (code !== 200) throw new Error(`the removed member's decision answered ${code}`);
    stale++;
    if (started - changedAt > GIVE_UP_MS) throw new Error(`the removal was not honoured within ${GIVE_UP_MS} ms`);
  }
}

/** Decisions facts looked up from memory and from the database so far on `s` (its /metrics). */
async function lookups(s: ServerProcess): Promise<{ memory: number; database: number; listener: string | null }> {
  const text = await (await fetch(`http://127.0.0.1:${s.port}/metrics`)).text();
  const count = (from: string) => Number(new RegExp(`tenant_service_decision_facts_lookups_total\\{from="${from}"\\} (\\d+)`).exec(text)?.[1] ?? NaN);
  return { memory: count('memory'), database: count('database'), listener: /tenant_service_decision_facts_listener_state\{state="(\w+)"\} 1/.exec(text)?.[1] ?? null };
}

export async function revocationLagScenario(ctx: BenchContext, opts: { owner: Knex; keys: LocalKeys; admin: Record<string, string> }) {
  const { log } = ctx;
  log(`revocation lag: three service processes, ${LOAD_CONNECTIONS} connections of decisions on each, ${TRIALS} trials`);
  const instances = await Promise.all([0, 1, 2].map(() => startServerProcess('service', ctx.serviceEnv)));
  const [a, b, c] = instances as [ServerProcess, ServerProcess, ServerProcess];
  // On this thread (its event loop delays the polls a little: the lag measured is, if anything, longer).
  const load = instances.map((s) => autocannon({ url: `http://127.0.0.1:${s.port}/api/tenant/decision`, connections: LOAD_CONNECTIONS, duration: 3_600, headers: ctx.member, timeout: 30 }));
  const loadStarted = performance.now();
  let loadStopped = false;
  const stopLoad = async () => {
    if (loadStopped) return null;
    loadStopped = true;
    for (const l of load) l.stop();
    const results = await Promise.all(load);
    const seconds = (performance.now() - loadStarted) / 1000;
    return results.map((r) => ({ requests_per_s: Math.round(r.requests.total / seconds), non_2xx: r.non2xx, errors: r.errors + r.timeouts }));
  };
  try {
    const tenant = await opts.owner('tenants').where({ slug: 'bench-co' }).first<{ id: string }>('id');
    const lags: number[] = [];
    const byInstance: Record<'b' | 'c', number[]> = { b: [], c: [] };
    let stale = 0;
    await new Promise((r) => setTimeout(r, 2_000)); // the load is steady
    const before = await Promise.all([b, c].map(lookups));
    for (let trial = 1; trial <= TRIALS; trial++) {
      const subject = `revoked-${trial}-${Date.now()}`;
      const [user] = await opts.owner('users')
        .insert({ tenant_id: tenant!.id, issuer: LOCAL_ISSUER, subject, email: `${subject}@bench.test`, role: 'member' })
        .returning<Array<{ id: string }>>('id');
      const headers = { Authorization: `Bearer ${signLocalToken(opts.keys, { sub: subject, tenant: 'bench-co', ttlSeconds: 3_600 })}` };
      // Held by B and C: answered twice each (the insert's own notification has dropped bench-co).
      for (const s of [b, c]) {
        for (let i = 0; i < 2; i++) {
          const code = await status(s, 'GET', '/api/tenant/decision', headers);
          if (code !== 200) throw new Error(`the new member's decision answered ${code} before its removal`);
        }
      }
      const removed = await status(a, 'DELETE', `/api/tenant/members/${user!.id}`, { ...opts.admin, 'X-Tenant': 'bench-co' });
      const changedAt = performance.now();
      if (removed !== 204) throw new Error(`removeMember answered ${removed}`);
      const [onB, onC] = await Promise.all([firstRefusal(b, headers, changedAt), firstRefusal(c, headers, changedAt)]);
      byInstance.b.push(onB.lag_ms);
      byInstance.c.push(onC.lag_ms);
      lags.push(onB.lag_ms, onC.lag_ms);
      stale += onB.stale_answers + onC.stale_answers;
      log(`  trial ${trial}: B ${onB.lag_ms} ms, C ${onC.lag_ms} ms`);
    }
    const after = await Promise.all([b, c].map(lookups));
    const steadyLoad = await stopLoad();
    // Whether B and C answered from memory meanwhile (an instance whose listener is behind answers from the database).
    const fromMemory = after.map((x, i) => ({ memory: x.memory - before[i]!.memory, database: x.database - before[i]!.database, listener_at_end: x.listener }));
    const sorted = [...lags].sort((x, y) => x - y);
    const out = {
      instances: 3,
      trials: TRIALS,
      load_connections_per_instance: LOAD_CONNECTIONS,
      /** The steady decision load on A, B and C over the whole scenario. */
      load: steadyLoad,
      lags: sorted.length,
      p50_ms: percentile(sorted, 50),
      p99_ms: percentile(sorted, 99),
      max_ms: sorted.at(-1)!,
      bound_ms: BOUND_MS,
      met: sorted.at(-1)! <= BOUND_MS,
      /** 200s answered after the removal's response, before the first 403 (requests begun within the lag). */
      answers_within_lag: stale,
      by_instance: byInstance,
      /** Fact lookups of B and C during the trials (their load included), from memory and from the database. */
      lookups_b_c: fromMemory,
    };
    log(`  revocation lag: p50 ${out.p50_ms} ms, p99 ${out.p99_ms} ms, max ${out.max_ms} ms over ${out.lags} lags (bound ${BOUND_MS} ms); lookups on B and C: ${JSON.stringify(fromMemory)}; load on A, B, C: ${JSON.stringify(steadyLoad)}`);
    return out;
  } finally {
    await stopLoad();
    for (const s of instances) await s.stop();
  }
}
