/**
 * 4 connections post 1 MiB worst-case JSON bodies (`[0,0,0,…]` and deep nesting)
 * without a token while one authenticated caller loads GET /api/tenant; that caller's p99 with
 * the attack against its p99 without (target: within 3x).
 */
import { startLoad } from './load-worker';
import type { BenchContext } from './types';

const MIB = 1024 * 1024;
/** Worst-case JSON for the body stage: a flat array of a million elements, and deep nesting. */
const BODIES = [`[${'0,'.repeat(MIB / 2 - 1)}0]`, '['.repeat(MIB / 2) + ']'.repeat(MIB / 2)];

const DURATION_S = Number(process.env.BENCH_ATTACK_DURATION ?? 6);

/** The caller, on a load thread of its own (latency to 0.01 ms, bench/scenarios/load-worker.ts). */
async function callerLoad(ctx: BenchContext): Promise<{ requests_per_s: number; p50_ms: number; p99_ms: number; non_2xx: number }> {
  const load = startLoad([{ url: `${ctx.serviceUrl}/api/tenant`, connections: 1, durationS: DURATION_S, headers: ctx.member }]);
  const [r] = await load.done;
  await load.stop();
  return { requests_per_s: r!.requests_per_s, p50_ms: r!.p50_ms, p99_ms: r!.p99_ms, non_2xx: r!.total - r!['2xx'] };
}

const ROUNDS = Number(process.env.BENCH_ATTACK_ROUNDS ?? 3);

/** One round: the caller alone, then the caller under attack. */
async function round(ctx: BenchContext) {
  const quiet = await callerLoad(ctx);
  const url = `${ctx.serviceUrl}/api/boards`;
  const headers = { 'Content-Type': 'application/json' };
  const load = startLoad(BODIES.flatMap((body) => [0, 1].map(() => ({ url, method: 'POST' as const, connections: 1, durationS: DURATION_S + 1, headers, body }))));
  const attacked = await callerLoad(ctx);
  const attack = await load.done;
  await load.stop();
  const ratio = quiet.p99_ms > 0 ? Math.round((attacked.p99_ms / quiet.p99_ms) * 100) / 100 : 0;
  const answered = attack.reduce((n, r) => n + r.total, 0);
  ctx.log(`  without attack p99 ${quiet.p99_ms} ms; with attack p99 ${attacked.p99_ms} ms (${ratio}x); ${answered} attack requests answered`);
  return { caller_without_attack: quiet, caller_with_attack: attacked, p99_ratio: ratio, attack_requests_answered: answered, attack_statuses: attack };
}

export async function bodyAttack(ctx: BenchContext) {
  ctx.log(`17.1: one caller on GET /api/tenant, ${ROUNDS} rounds of ${DURATION_S} s without, then with 4 connections posting 1 MiB bodies without a token`);
  const rounds = [];
  for (let i = 0; i < ROUNDS; i++) rounds.push(await round(ctx));
  const ratios = rounds.map((r) => r.p99_ratio).sort((a, b) => a - b);
  const median = ratios[ratios.length >> 1]!;
  ctx.log(`  caller's p99 with / without the attack: median ${median}x (rounds ${rounds.map((r) => r.p99_ratio).join(', ')}; target <= 3x)`);
  return { duration_s: DURATION_S, rounds, p99_ratio: median, target_p99_ratio: 3, met: median <= 3 };
}
