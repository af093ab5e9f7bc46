/**
 * Three neighbour figures (docs/operations.md "Fairness between callers"), each another tenant's
 * caller's p99 during an attack as a ratio to its p99 alone (target: at most 3x), each measured
 * by two methods, named in the result:
 *
 * - `decision_flood`: a bench-co member floods GET /api/tenant/decision from 32 connections; the
 *   victim is a member of another tenant asking for its own decisions.
 * - `scim_burst`: 300 SCIM creates in flight at once on one tenant (POST /scim/v2/Users, a new
 *   userName each); the victim is another tenant's member listing the members.
 * - `unknown_token_flood`: made-up SCIM tokens from 64 connections (one address); the victim is
 *   another tenant's member listing the members.
 *
 * The methods: `closed_loop` — one keep-alive connection asking again the moment it is answered
 * (the method of bench/scenarios/noisy-neighbour.ts; thousands of samples, and its own steady
 * load is in both the quiet and the flooded figure); `probe` — an independent probe
 * (bench/scenarios/probe.ts: one request at a time, about 5 a second, a new connection each, as
 * an outside probe measured 5.8x while the closed loop reported 3.0x). A probe's request arrives
 * after an idle gap, at a moment unrelated to the service's rhythm, and waits for whatever turn
 * of the event loop (a batch of a flood's requests read at once, a garbage collection) is under
 * way; alone, it meets an idle service. So its quiet p99 is lower and its flooded p99 higher than
 * the closed loop's. BENCH_ONLY=neighbours runs these alone; BENCH_NEIGHBOURS picks some
 * (`decision,scim-burst,unknown-tokens`); BENCH_NEIGHBOUR_FIGURE_S sets each measurement's
 * seconds (8).
 */
import crypto from 'node:crypto';
import { startLoad, type LoadRun } from './load-worker';
import { runProbe, type ProbeResult } from './probe';
import type { BenchContext } from './types';

const SECONDS = Number(process.env.BENCH_NEIGHBOUR_FIGURE_S ?? 8);
const PICKED = (process.env.BENCH_NEIGHBOURS ?? 'decision,scim-burst,unknown-tokens').split(',').map((s) => s.trim());
const SCIM_JSON = 'application/scim+json';

interface MethodFigure {
  method: string;
  alone: { p50_ms: number; p99_ms: number; samples: number; non_2xx: number };
  during: { p50_ms: number; p99_ms: number; samples: number; non_2xx: number };
  p99_ratio: number | null;
  met: boolean;
}

export interface NeighbourFigure {
  attack: string;
  victim: string;
  attack_answers: { total: number; '2xx': number; '4xx': number; '5xx': number; errors: number; requests_per_s: number; by_status?: Record<string, number> };
  closed_loop: MethodFigure;
  probe: MethodFigure;
  target_p99_ratio: 3;
  met: boolean;
}

const CLOSED_LOOP = 'closed loop: one keep-alive connection, the next request the moment the last is answered';

async function closedLoop(url: string, headers: Record<string, string>) {
  const load = startLoad([{ url, connections: 1, durationS: SECONDS, headers }]);
  const [r] = await load.done;
  await load.stop();
  return { p50_ms: r!.p50_ms, p99_ms: r!.p99_ms, samples: r!.total, non_2xx: r!.total - r!['2xx'] };
}

const probeFigure = (p: ProbeResult) => ({ p50_ms: p.p50_ms, p99_ms: p.p99_ms, samples: p.samples, non_2xx: p.non_2xx });

function figure(method: string, alone: MethodFigure['alone'], during: MethodFigure['during']): MethodFigure {
  // No sample in a window (an overloaded machine): no ratio, and not met.
  if (alone.samples === 0 || during.samples === 0) return { method, alone, during, p99_ratio: null, met: false };
  const ratio = Math.round((during.p99_ms / Math.max(alone.p99_ms, 0.001)) * 100) / 100;
  return { method, alone, during, p99_ratio: ratio, met: ratio <= 3 && during.non_2xx === 0 };
}

/** The victim alone, then during the attack, by both methods (one after the other, never together). */
async function measure(ctx: BenchContext, name: string, victim: { url: string; headers: Record<string, string>; label: string }, attack: LoadRun & { label: string }): Promise<NeighbourFigure> {
  ctx.log(`neighbours: ${name}: ${victim.label} alone (${SECONDS} s closed loop, ${SECONDS} s probe)`);
  const aloneClosed = await closedLoop(victim.url, victim.headers);
  const aloneProbe = probeFigure(await runProbe({ url: victim.url, headers: victim.headers, durationS: SECONDS }));
  ctx.log(`neighbours: ${name}: the same during ${attack.label}`);
  const flood = startLoad([{ ...attack, durationS: 2 * SECONDS + 30 }]);

  await new Promise((r) => setTimeout(r, 500)); // the attack at full strength first
  const duringClosed = await closedLoop(victim.url, victim.headers);
  const duringProbe = probeFigure(await runProbe({ url: victim.url, headers: victim.headers, durationS: SECONDS }));
  flood.finish();
  const [a] = await flood.done;
  await flood.stop();
  const closed = figure(CLOSED_LOOP, aloneClosed, duringClosed);
  const probe = figure('probe: one request at a time every 200 ms, each on a new connection', aloneProbe, duringProbe);
  for (const f of [closed, probe]) ctx.log(`  ${f.method}: p99 alone ${f.alone.p99_ms} ms, during ${f.during.p99_ms} ms (${f.p99_ratio ?? 'no ratio'}x; target <= 3x; ${f.alone.samples} and ${f.during.samples} samples)`);
  ctx.log(`  the attack: ${a!.total} requests (${a!.requests_per_s}/s), 2xx ${a!['2xx']}, 4xx ${a!['4xx']}, 5xx ${a!['5xx']}; by status ${JSON.stringify(a!.statuses)}`);
  return {
    attack: attack.label,
    victim: victim.label,
    attack_answers: { total: a!.total, '2xx': a!['2xx'], '4xx': a!['4xx'], '5xx': a!['5xx'], errors: a!.errors + a!.timeouts, requests_per_s: a!.requests_per_s, by_status: a!.statuses },
    closed_loop: closed,
    probe,
    target_p99_ratio: 3,
    met: closed.met && probe.met,
  };
}

async function api(ctx: BenchContext, method: string, path: string, headers: Record<string, string>, body?: unknown): Promise<unknown> {
  const r = await fetch(`${ctx.serviceUrl}${path}`, { method, headers: { ...headers, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) }, body: body === undefined ? undefined : JSON.stringify(body) });
  const parsed: unknown = await r.json().catch(() => null);
  if (r.status >= 300) throw new Error(`${method} ${path} answered ${r.status}: ${JSON.stringify(parsed)}`);
  return parsed;
}

export async function neighbourFigures(ctx: BenchContext, opts: { admin: Record<string, string>; neighbour: Record<string, string> }) {
  const out: Record<string, NeighbourFigure> = {};
  const members = { url: `${ctx.serviceUrl}/api/tenant/members`, headers: opts.neighbour, label: "another tenant's member: GET /api/tenant/members" };
  // The neighbour is provisioned by its first request.
  await api(ctx, 'GET', '/api/tenant', opts.neighbour);
  if (PICKED.includes('decision')) {
    out.decision_flood = await measure(
      ctx,
      'decision flood',
      { url: `${ctx.serviceUrl}/api/tenant/decision`, headers: opts.neighbour, label: "another tenant's member: GET /api/tenant/decision" },
      { url: `${ctx.serviceUrl}/api/tenant/decision`, connections: 32, durationS: 0, headers: ctx.member, label: 'a bench-co member: GET /api/tenant/decision from 32 connections' },
    );
  }
  if (PICKED.includes('scim-burst')) {
    const slug = `scim-burst-${Date.now()}`;
    await api(ctx, 'POST', '/api/setup/tenant', opts.admin, { name: 'SCIM Burst', slug });
    const minted = (await api(ctx, 'POST', '/api/tenant/scim/tokens', { ...opts.admin, 'X-Tenant': slug }, { description: 'bench burst' })) as { token: string };
    const body = JSON.stringify({ schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'], userName: 'burst-{n}@burst.example.test', active: true, emails: [{ value: 'burst-{n}@burst.example.test', primary: true }] });
    out.scim_burst = await measure(ctx, 'SCIM burst', members, {
      url: `${ctx.serviceUrl}/scim/v2/Users`,
      method: 'POST',
      connections: 300,
      durationS: 0,
      headers: { Authorization: `Bearer ${minted.token}`, 'Content-Type': SCIM_JSON, Accept: SCIM_JSON },
      numberedBody: body,
      label: '300 SCIM creates in flight at once on one tenant (POST /scim/v2/Users)',
    });
  }
  if (PICKED.includes('unknown-tokens')) {
    const token = `scim_${crypto.randomBytes(32).toString('base64url')}`;
    out.unknown_token_flood = await measure(ctx, 'unknown SCIM tokens', members, {
      url: `${ctx.serviceUrl}/scim/v2/Users`,
      connections: 64,
      durationS: 0,
      headers: { Authorization: `Bearer ${token}`, Accept: SCIM_JSON },
      label: 'a made-up SCIM token from 64 connections (GET /scim/v2/Users)',
    });
  }
  const figures = Object.values(out);
  return { seconds_per_measurement: SECONDS, ...out, met: figures.length > 0 && figures.every((f) => f.met) };
}
