/**
 * The measure of bench/README.md#scenarios: GET /api/tenant and GET /api/boards as ratios to
 * hand-written references (bench/reference-server.ts) on the same database with the same token, in
 * the same run; and the gateway decision (GET /api/tenant/decision), asked on every product
 * request, against the same one-round-trip reference as GET /api/tenant, in the same rounds
 * (target: both at least 1.7x); the decision and GET /api/tenant against the hand-written
 * memory-decision reference (verify, a Map, LISTEN; target: at least 0.8x); the decision with
 * `?permission=` (docs/roles.md) against the decision without it (the role's permissions are read
 * by the same statement: target at most 1.1x); and the decision of the service (the run's
 * setting: its verified-token cache on, 10 000 tokens, unless SERVICE_JWT_CACHE_SIZE says
 * otherwise) against a second service process with the cache off (SERVICE_JWT_CACHE_SIZE=0);
 * and what `npm start`'s own logging costs: the decision of the service (info logs, a line per
 * request on standard output) against a third service process with SERVICE_LOG_LEVEL=warn, and
 * the CPU the service spends idle (its background workers) over BENCH_IDLE_S s (default 5); and
 * what the rate limits (on in `npm start`, off in the bench so one token can load it) cost: the
 * decision of a service process with them on and the decision's limit at its maximum (10 000 000
 * per minute: counted, never reached) against the decision of the first.
 * Each server runs in its own process; the service is its real entry point
 * (server-process.ts). The machine is shared, so references and service alternate in short
 * rounds (BENCH_RATIO_ROUNDS, default 4, of BENCH_RATIO_DURATION s, default 5), after a warm-up
 * of each server on each path (BENCH_RATIO_WARMUP s, default 3, not counted); the req/s and p99
 * ratios are the median of the per-round ratios (a burst of load elsewhere spoils one round, not
 * the result), and the CPU time each server spent per request is reported beside them, as it
 * depends much less on what else the machine is doing.
 */
import { startServerProcess, type ServerProcess } from './server-process';
import type { BenchContext, Throughput } from './types';

const ROUNDS = Number(process.env.BENCH_RATIO_ROUNDS ?? 4);
const ROUND_S = Number(process.env.BENCH_RATIO_DURATION ?? 5);
const WARMUP_S = Number(process.env.BENCH_RATIO_WARMUP ?? 3);
const ratio = (a: number, b: number) => (b > 0 ? Math.round((a / b) * 1000) / 1000 : 0);
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return Math.round((s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2) * 1000) / 1000;
};

interface Run extends Throughput {
  cpu_ms_per_request: number;
}

async function measured(ctx: BenchContext, server: ServerProcess, scenario: string, path: string): Promise<Run> {
  const cpuBefore = await server.cpuMicros();
  const t = await ctx.load(scenario, `http://127.0.0.1:${server.port}${path}`, ctx.member, { duration: ROUND_S });
  const cpu = (await server.cpuMicros()) - cpuBefore;
  const requests = t.requests_per_s * t.duration_s;
  const run = { ...t, cpu_ms_per_request: requests > 0 ? Math.round((cpu / requests) * 10) / 10000 : 0 };
  ctx.log(`  CPU ${run.cpu_ms_per_request} ms per request`);
  return run;
}

function compare(service: Run[], reference: Run[]) {
  const per = (key: 'requests_per_s' | 'p99_ms' | 'cpu_ms_per_request') => service.map((r, i) => ratio(r[key], reference[i]![key]));
  const rps = per('requests_per_s');
  const p99 = per('p99_ms');
  const cpu = per('cpu_ms_per_request');
  return {
    rps_ratio: median(rps),
    p99_ratio: median(p99),
    cpu_per_request_ratio: median(cpu),
    rounds: { rps, p99, cpu_per_request: cpu },
    service: service.map(({ requests_per_s, p50_ms, p99_ms, cpu_ms_per_request, non_2xx }) => ({ requests_per_s, p50_ms, p99_ms, cpu_ms_per_request, non_2xx })),
    reference: reference.map(({ requests_per_s, p50_ms, p99_ms, cpu_ms_per_request, non_2xx }) => ({ requests_per_s, p50_ms, p99_ms, cpu_ms_per_request, non_2xx })),
  };
}

/** The decision asking for a permission the bench member's role holds (run.ts gives it). */
export const BENCH_PERMISSION = 'invoices:write';
const PERMISSION_DECISION = `/api/tenant/decision?permission=${BENCH_PERMISSION}`;
/** The verified-token cache of the service: the run's setting, else the default. */
const JWT_CACHE_SIZE = process.env.SERVICE_JWT_CACHE_SIZE ?? '10000 (the default)';
const IDLE_S = Number(process.env.BENCH_IDLE_S ?? 5);

export async function pipelineRatios(ctx: BenchContext) {
  const servers = await Promise.all([
    startServerProcess('service', ctx.serviceEnv),
    startServerProcess('reference-tenant', ctx.serviceEnv),
    startServerProcess('reference-boards', ctx.serviceEnv),
    startServerProcess('reference-memory', ctx.serviceEnv),
    startServerProcess('service', { ...ctx.serviceEnv, SERVICE_JWT_CACHE_SIZE: '0' }),
    startServerProcess('service', { ...ctx.serviceEnv, SERVICE_LOG_LEVEL: 'warn' }),
    startServerProcess('service', { ...ctx.serviceEnv, SERVICE_RATE_LIMIT_ENABLED: 'true', SERVICE_RATE_LIMIT_DECISION_PER_MINUTE: '10000000' }),
  ]);
  const [service, refTenant, refBoards, refMemory, cached, warnLogs, limited] = servers;
  const runs: Record<'refTenant' | 'tenant' | 'decision' | 'decisionPermission' | 'refMemoryDecision' | 'refMemoryTenant' | 'decisionJwtCache' | 'decisionWarnLogs' | 'decisionRateLimited' | 'refBoards' | 'boards', Run[]> = {
    refTenant: [],
    tenant: [],
    decision: [],
    decisionPermission: [],
    refMemoryDecision: [],
    refMemoryTenant: [],
    decisionJwtCache: [],
    decisionWarnLogs: [],
    decisionRateLimited: [],
    refBoards: [],
    boards: [],
  };
  let idleCpuMsPerS = 0;
  try {
    // The background workers' cost (webhook deliveries, retention, scheduled deletions): CPU of the idle service.
    const idleBefore = await service.cpuMicros();
    await new Promise((r) => setTimeout(r, IDLE_S * 1000));
    idleCpuMsPerS = Math.round(((await service.cpuMicros()) - idleBefore) / IDLE_S / 10) / 100;
    ctx.log(`  the idle service: ${idleCpuMsPerS} ms of CPU per second`);
    // Every process starts cold: without a warm-up, the first round measures V8's JIT
    // compiling the service's larger code path more than it measures the service.
    for (const [server, path] of [
      [refTenant, '/api/tenant'],
      [service, '/api/tenant'],
      [service, '/api/tenant/decision'],
      [service, PERMISSION_DECISION],
      [refMemory, '/api/tenant/decision'],
      [refMemory, '/api/tenant'],
      [cached, '/api/tenant/decision'],
      [warnLogs, '/api/tenant/decision'],
      [limited, '/api/tenant/decision'],
      [refBoards, '/api/boards'],
      [service, '/api/boards'],
    ] as const) {
      await ctx.load(`warm-up (not counted): ${path}`, `http://127.0.0.1:${server.port}${path}`, ctx.member, { duration: WARMUP_S });
    }
    for (let round = 1; round <= ROUNDS; round++) {
      runs.refTenant.push(await measured(ctx, refTenant, `reference: app_tenant_facts per request (round ${round})`, '/api/tenant'));
      runs.tenant.push(await measured(ctx, service, `GET /api/tenant (service process, round ${round})`, '/api/tenant'));
      runs.decision.push(await measured(ctx, service, `GET /api/tenant/decision (service process, round ${round})`, '/api/tenant/decision'));
      runs.decisionPermission.push(await measured(ctx, service, `GET ${PERMISSION_DECISION} (service process, round ${round})`, PERMISSION_DECISION));
      runs.refMemoryDecision.push(await measured(ctx, refMemory, `reference: decision from memory (round ${round})`, '/api/tenant/decision'));
      runs.refMemoryTenant.push(await measured(ctx, refMemory, `reference: GET /api/tenant from memory (round ${round})`, '/api/tenant'));
      runs.decisionJwtCache.push(await measured(ctx, cached, `GET /api/tenant/decision (service process, SERVICE_JWT_CACHE_SIZE=0, round ${round})`, '/api/tenant/decision'));
      runs.decisionWarnLogs.push(await measured(ctx, warnLogs, `GET /api/tenant/decision (service process, SERVICE_LOG_LEVEL=warn, round ${round})`, '/api/tenant/decision'));
      runs.decisionRateLimited.push(await measured(ctx, limited, `GET /api/tenant/decision (service process, rate limits on, decision limit 10 000 000/min, round ${round})`, '/api/tenant/decision'));
      runs.refBoards.push(await measured(ctx, refBoards, `reference: BEGIN, app_tenant_facts, boards, COMMIT (round ${round})`, '/api/boards'));
      runs.boards.push(await measured(ctx, service, `GET /api/boards (service process, round ${round})`, '/api/boards'));
    }
  } finally {
    for (const s of servers) await s.stop();
  }
  const tenant = compare(runs.tenant, runs.refTenant);
  const boards = compare(runs.boards, runs.refBoards);
  const decision = compare(runs.decision, runs.refTenant);
  const byPermission = compare(runs.decisionPermission, runs.decision);
  const decisionMemory = compare(runs.decision, runs.refMemoryDecision);
  const tenantMemory = compare(runs.tenant, runs.refMemoryTenant);
  const jwtCache = compare(runs.decision, runs.decisionJwtCache);
  const logs = compare(runs.decision, runs.decisionWarnLogs);
  const rateLimited = compare(runs.decisionRateLimited, runs.decision);
  // The decision by permission as the cost of the plain decision: req/s at least 1/1.1, p99 at most 1.1x.
  const permissionMet = byPermission.rps_ratio >= 0.91 && byPermission.p99_ratio <= 1.1;
  ctx.log(`  GET /api/tenant: median ${tenant.rps_ratio}x the reference's req/s (rounds ${tenant.rounds.rps.join(', ')}), p99 ${tenant.p99_ratio}x, CPU per request ${tenant.cpu_per_request_ratio}x (targets: req/s >= 1.7x, p99 <= 1.5x)`);
  ctx.log(`  GET /api/tenant/decision: median ${decision.rps_ratio}x the reference's req/s (rounds ${decision.rounds.rps.join(', ')}), p99 ${decision.p99_ratio}x, CPU per request ${decision.cpu_per_request_ratio}x (targets: req/s >= 1.7x, p99 <= 1.5x)`);
  ctx.log(`  GET /api/tenant/decision vs the memory-decision reference: median ${decisionMemory.rps_ratio}x its req/s (rounds ${decisionMemory.rounds.rps.join(', ')}), p99 ${decisionMemory.p99_ratio}x, CPU per request ${decisionMemory.cpu_per_request_ratio}x (target: req/s >= 0.8x)`);
  ctx.log(`  GET /api/tenant vs the memory-decision reference: median ${tenantMemory.rps_ratio}x its req/s (rounds ${tenantMemory.rounds.rps.join(', ')}), p99 ${tenantMemory.p99_ratio}x, CPU per request ${tenantMemory.cpu_per_request_ratio}x (target: req/s >= 0.8x)`);
  ctx.log(`  GET /api/tenant/decision with SERVICE_JWT_CACHE_SIZE=${JWT_CACHE_SIZE} vs 0 (the cache off): median ${jwtCache.rps_ratio}x req/s (rounds ${jwtCache.rounds.rps.join(', ')}), p99 ${jwtCache.p99_ratio}x, CPU per request ${jwtCache.cpu_per_request_ratio}x`);
  ctx.log(`  GET /api/tenant/decision with info logs (npm start's default) vs SERVICE_LOG_LEVEL=warn: median ${logs.rps_ratio}x req/s (rounds ${logs.rounds.rps.join(', ')}), p99 ${logs.p99_ratio}x, CPU per request ${logs.cpu_per_request_ratio}x`);
  ctx.log(`  GET /api/tenant/decision with rate limits on (counted, never reached) vs off: median ${rateLimited.rps_ratio}x req/s (rounds ${rateLimited.rounds.rps.join(', ')}), p99 ${rateLimited.p99_ratio}x, CPU per request ${rateLimited.cpu_per_request_ratio}x`);
  ctx.log(`  GET ${PERMISSION_DECISION}: median ${byPermission.rps_ratio}x the plain decision's req/s (rounds ${byPermission.rounds.rps.join(', ')}), p99 ${byPermission.p99_ratio}x, CPU per request ${byPermission.cpu_per_request_ratio}x (targets: req/s >= 0.91x, p99 <= 1.1x)`);
  ctx.log(`  GET /api/boards: median ${boards.rps_ratio}x the reference's req/s (rounds ${boards.rounds.rps.join(', ')}), p99 ${boards.p99_ratio}x, CPU per request ${boards.cpu_per_request_ratio}x (targets: req/s >= 0.8x, p99 <= 1.5x)`);
  return {
    rounds: ROUNDS,
    round_seconds: ROUND_S,
    get_tenant: { ...tenant, targets: { rps_ratio_at_least: 1.7, p99_ratio_at_most: 1.5 }, met: tenant.rps_ratio >= 1.7 && tenant.p99_ratio <= 1.5 },
    get_tenant_decision: { ...decision, targets: { rps_ratio_at_least: 1.7, p99_ratio_at_most: 1.5 }, met: decision.rps_ratio >= 1.7 && decision.p99_ratio <= 1.5 },
    get_tenant_decision_vs_memory_reference: { ...decisionMemory, targets: { rps_ratio_at_least: 0.8 }, met: decisionMemory.rps_ratio >= 0.8 },
    get_tenant_vs_memory_reference: { ...tenantMemory, targets: { rps_ratio_at_least: 0.8 }, met: tenantMemory.rps_ratio >= 0.8 },
    get_tenant_decision_info_logs_vs_warn: logs,
    idle_service_cpu_ms_per_s: idleCpuMsPerS,
    get_tenant_decision_rate_limits_on_vs_off: rateLimited,
    get_tenant_decision_jwt_cache: { ...jwtCache, jwt_cache_size: JWT_CACHE_SIZE, without: '0' },
    get_tenant_decision_permission: { ...byPermission, targets: { rps_ratio_at_least: 0.91, p99_ratio_at_most: 1.1 }, met: permissionMet },
    get_boards: { ...boards, targets: { rps_ratio_at_least: 0.8, p99_ratio_at_most: 1.5 }, met: boards.rps_ratio >= 0.8 && boards.p99_ratio <= 1.5 },
  };
}
