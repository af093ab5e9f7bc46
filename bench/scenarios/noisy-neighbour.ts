/**
 * One caller's flood against another tenant's latency: a member of bench-co floods the gateway
 * decision with 32 connections while a member of another tenant asks for its own decisions on
 * one connection. The quiet caller's p99 during the flood, as a ratio to its p99 alone (target:
 * at most 3x; docs/operations.md "Fairness between callers"). Rate limits are off in the bench,
 * so the flood never hits its limit: this is the worst case the limits would otherwise cut short.
 */
import { startLoad } from './load-worker';
import type { BenchContext } from './types';

const DURATION_S = Number(process.env.BENCH_NEIGHBOUR_DURATION ?? 6);
const ROUNDS = Number(process.env.BENCH_NEIGHBOUR_ROUNDS ?? 3);
const FLOOD_CONNECTIONS = 32;

/** The quiet caller, on a load thread of its own (latency to 0.01 ms, bench/scenarios/load-worker.ts). */
async function quietLoad(url: string, headers: Record<string, string>) {
  const load = startLoad([{ url, connections: 1, durationS: DURATION_S, headers }]);
  const [r] = await load.done;
  await load.stop();
  return { requests_per_s: r!.requests_per_s, p50_ms: r!.p50_ms, p99_ms: r!.p99_ms, non_2xx: r!.total - r!['2xx'] };
}

export async function noisyNeighbour(ctx: BenchContext, neighbour: Record<string, string>) {
  const url = `${ctx.serviceUrl}/api/tenant/decision`;
  ctx.log(`noisy neighbour: a member of another tenant on GET /api/tenant/decision, ${ROUNDS} rounds of ${DURATION_S} s alone, then while a bench-co member floods it with ${FLOOD_CONNECTIONS} connections`);
  const rounds = [];
  for (let i = 0; i < ROUNDS; i++) {
    const quiet = await quietLoad(url, neighbour);
    const flood = startLoad([{ url, connections: FLOOD_CONNECTIONS, durationS: DURATION_S + 1, headers: ctx.member }]);
    const during = await quietLoad(url, neighbour);
    const [flooded] = await flood.done;
    await flood.stop();
    const ratio = quiet.p99_ms > 0 ? Math.round((during.p99_ms / quiet.p99_ms) * 100) / 100 : 0;
    ctx.log(`  alone p99 ${quiet.p99_ms} ms; during the flood p99 ${during.p99_ms} ms (${ratio}x); the flood got ${flooded!['2xx']} answers 2xx of ${flooded!.total}`);
    rounds.push({ quiet, during_flood: during, flood: flooded, p99_ratio: ratio });
  }
  const ratios = rounds.map((r) => r.p99_ratio).sort((a, b) => a - b);
  const median = ratios[ratios.length >> 1]!;
  ctx.log(`  quiet caller's p99 during / without the flood: median ${median}x (rounds ${rounds.map((r) => r.p99_ratio).join(', ')}; target <= 3x)`);
  return { duration_s: DURATION_S, flood_connections: FLOOD_CONNECTIONS, rounds, p99_ratio: median, target_p99_ratio: 3, met: median <= 3 };
}
