/**
 * A directory provisioning one tenant over SCIM 2.0 (docs/directory-sync.md) while another
 * tenant's member asks for its decisions: BENCH_SCIM_USERS users (10 000 by default) created by
 * POST /scim/v2/Users, BENCH_SCIM_GROUPS groups (500) by POST /scim/v2/Groups, then their members
 * added by PATCH in batches of BENCH_SCIM_PATCH_BATCH (20), every user in two groups, as Entra ID
 * and Okta do it: BENCH_SCIM_CONCURRENCY requests in flight (8). The service runs in its own
 * process. Reported: the provisioning rate (users/s of the user phase, and of the whole run), and
 * the other tenant's GET /api/tenant/decision p99 at 4 connections during provisioning against
 * its quiet p99 (target ≤ 3×). Everything the directory sent must be answered 2xx, and the
 * tenant must hold exactly what was sent afterwards, or the scenario fails.
 */
import http from 'node:http';
import { startLoad } from './load-worker';
import type { BenchContext } from './types';
import { startServerProcess } from './server-process';

const USERS = Number(process.env.BENCH_SCIM_USERS ?? 10_000);
const GROUPS = Number(process.env.BENCH_SCIM_GROUPS ?? 500);
const PATCH_BATCH = Number(process.env.BENCH_SCIM_PATCH_BATCH ?? 20);
const CONCURRENCY = Number(process.env.BENCH_SCIM_CONCURRENCY ?? 8);
/** Connections of the other tenant's decision load: a steady caller, not a flood. */
const OTHER_CONNECTIONS = 4;
const QUIET_S = 5;
const SCIM_JSON = 'application/scim+json';

interface Answer {
  status: number;
  body: unknown;
  ms: number;
}

function send(agent: http.Agent, port: number, method: string, path: string, headers: Record<string, string>, body?: unknown): Promise<Answer> {
  const payload = body === undefined ? undefined : JSON.stringify(body);
  // SCIM bodies as directories send them; the service's own API takes application/json.
  const type = path.startsWith('/scim/') ? SCIM_JSON : 'application/json';
  const h = payload === undefined ? headers : { ...headers, 'Content-Type': type, 'Content-Length': String(Buffer.byteLength(payload)) };
  const started = process.hrtime.bigint();
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method, path, headers: h, agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let parsed: unknown = text;
        try {
          parsed = text ? JSON.parse(text) : undefined;
        } catch {
          // kept as text for the error message
        }
        resolve({ status: res.statusCode ?? 0, body: parsed, ms: Number(process.hrtime.bigint() - started) / 1e6 });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(payload);
  });
}

/** Runs `count` jobs with `CONCURRENCY` in flight; fails on the first answer that is not `ok`. */
async function inFlight(count: number, job: (i: number) => Promise<Answer>, ok: (a: Answer) => boolean, what: string): Promise<{ seconds: number; latencies: number[] }> {
  let next = 0;
  const latencies: number[] = [];
  const started = Date.now();
  await Promise.all(
    Array.from({ length: Math.min(CONCURRENCY, count) }, async () => {
      while (next < count) {
        const i = next++;
        const a = await job(i);
        if (!ok(a)) throw new Error(`${what} #${i} answered ${a.status}: ${JSON.stringify(a.body).slice(0, 500)}`);
        latencies.push(a.ms);
      }
    }),
  );
  return { seconds: (Date.now() - started) / 1000, latencies };
}

/** Decision facts looked up from memory and from the database so far (the service's /metrics). */
async function factLookups(port: number): Promise<{ memory: number; database: number }> {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  const count = (from: string) => Number(new RegExp(`tenant_service_decision_facts_lookups_total\\{from="${from}"\\} (\\d+)`).exec(text)?.[1] ?? NaN);
  return { memory: count('memory'), database: count('database') };
}

function p(sorted: number[], q: number): number {
  if (!sorted.length) return 0;
  return Math.round(sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((q / 100) * sorted.length) - 1))]! * 10) / 10;
}

function phase(name: string, requests: number, r: { seconds: number; latencies: number[] }) {
  const sorted = [...r.latencies].sort((a, b) => a - b);
  return { phase: name, requests, seconds: Math.round(r.seconds * 10) / 10, requests_per_s: Math.round((requests / r.seconds) * 10) / 10, p50_ms: p(sorted, 50), p99_ms: p(sorted, 99) };
}

/** The groups user `i` belongs to: two, half the groups apart. */
function groupsOf(i: number): number[] {
  const g = i % GROUPS;
  return GROUPS > 1 ? [g, (g + Math.floor(GROUPS / 2)) % GROUPS] : [g];
}

export interface ScimProvisioningResult {
  users: number;
  groups: number;
  memberships: number;
  patch_batch: number;
  concurrency: number;
  phases: ReturnType<typeof phase>[];
  users_per_s: number;
  users_per_s_whole_run: number;
  total_seconds: number;
  quiet_decision_p99_ms: number;
  during_decision_p99_ms: number;
  decision_requests_during: number;
  decision_non_2xx_during: number;
  /** The service's decision fact lookups alone and during provisioning: from memory or from the database. */
  fact_lookups_quiet: { memory: number; database: number };
  fact_lookups_during: { memory: number; database: number };
  p99_ratio: number;
  target_p99_ratio: number;
  met: boolean;
}

export async function scimProvisioningScenario(ctx: BenchContext, opts: { admin: Record<string, string>; neighbour: Record<string, string> }): Promise<ScimProvisioningResult> {
  const { log } = ctx;
  const server = await startServerProcess('service', ctx.serviceEnv);
  const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY + 2 });
  try {
    const slug = `scim-co-${Date.now()}`;
    const made = await send(agent, server.port, 'POST', '/api/setup/tenant', opts.admin, { name: 'SCIM Co', slug });
    if (made.status !== 201) throw new Error(`createTenant answered ${made.status}: ${JSON.stringify(made.body)}`);
    const asAdmin = { ...opts.admin, 'X-Tenant': slug };
    const minted = await send(agent, server.port, 'POST', '/api/tenant/scim/tokens', asAdmin, { description: 'bench directory' });
    if (minted.status !== 201) throw new Error(`createScimToken answered ${minted.status}: ${JSON.stringify(minted.body)}`);
    const scim = { Authorization: `Bearer ${(minted.body as { token: string }).token}`, Accept: SCIM_JSON };
    // The first group gives admin: role changes are part of what provisioning costs.
    const mapped = await send(agent, server.port, 'PUT', '/api/tenant/scim', asAdmin, { group_roles: [{ group: groupName(0), role: 'admin' }] });
    if (mapped.status !== 200) throw new Error(`updateScimSettings answered ${mapped.status}: ${JSON.stringify(mapped.body)}`);

    const decisionUrl = `http://127.0.0.1:${server.port}/api/tenant/decision`;
    log(`scim provisioning: another tenant's decision p99 alone (${QUIET_S} s, ${OTHER_CONNECTIONS} connections)`);
    const lookupsBefore = await factLookups(server.port);
    // The other tenant's decisions run on a thread of their own in both phases, so what they
    // measure is the service, not this thread's provisioning client.
    const quietLoad = startLoad([{ url: decisionUrl, connections: OTHER_CONNECTIONS, durationS: QUIET_S, headers: opts.neighbour }]);
    const [quiet] = await quietLoad.done;
    await quietLoad.stop();
    const lookupsQuiet = await factLookups(server.port);
    if (quiet!.total !== quiet!['2xx']) throw new Error(`the other tenant's decision answered ${quiet!.total - quiet!['2xx']} non-2xx while quiet`);

    log(`scim provisioning: ${USERS} users, ${GROUPS} groups, members by PATCH of ${PATCH_BATCH}, ${CONCURRENCY} requests in flight`);
    const during = startLoad([{ url: decisionUrl, connections: OTHER_CONNECTIONS, durationS: 3600, headers: opts.neighbour }]);
    const userIds: string[] = new Array<string>(USERS);
    const groupIds: string[] = new Array<string>(GROUPS);
    const phases: ReturnType<typeof phase>[] = [];
    const started = Date.now();
    try {
      const users = await inFlight(
        USERS,
        async (i) => {
          const a = await send(agent, server.port, 'POST', '/scim/v2/Users', scim, userBody(i, slug));
          if (a.status === 201) userIds[i] = (a.body as { id: string }).id;
          return a;
        },
        (a) => a.status === 201,
        'POST /scim/v2/Users',
      );
      phases.push(phase('POST /Users', USERS, users));
      log(`  users: ${phases[0]!.requests_per_s} users/s (p99 ${phases[0]!.p99_ms} ms)`);
      const groups = await inFlight(
        GROUPS,
        async (g) => {
          const a = await send(agent, server.port, 'POST', '/scim/v2/Groups', scim, {
            schemas: ['urn:ietf:params:scim:schemas:core:2.0:Group'],
            displayName: groupName(g),
            externalId: `bench-group-${g}`,
            members: [],
          });
          if (a.status === 201) groupIds[g] = (a.body as { id: string }).id;
          return a;
        },
        (a) => a.status === 201,
        'POST /scim/v2/Groups',
      );
      phases.push(phase('POST /Groups', GROUPS, groups));
      log(`  groups: ${phases[1]!.requests_per_s} groups/s`);
      const members: string[][] = Array.from({ length: GROUPS }, () => []);
      for (let i = 0; i < USERS; i++) for (const g of groupsOf(i)) members[g]!.push(userIds[i]!);
      const batches: Array<{ group: string; values: string[] }> = [];
      members.forEach((ids, g) => {
        for (let k = 0; k < ids.length; k += PATCH_BATCH) batches.push({ group: groupIds[g]!, values: ids.slice(k, k + PATCH_BATCH) });
      });
      const patched = await inFlight(
        batches.length,
        (b) =>
          send(agent, server.port, 'PATCH', `/scim/v2/Groups/${batches[b]!.group}`, scim, {
            schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'],
            Operations: [{ op: 'add', path: 'members', value: batches[b]!.values.map((value) => ({ value })) }],
          }),
        (a) => a.status === 200 || a.status === 204,
        'PATCH /scim/v2/Groups/{id}',
      );
      phases.push(phase('PATCH /Groups/{id} members', batches.length, patched));
      log(`  members: ${phases[2]!.requests_per_s} PATCHes/s`);
    } finally {
      during.finish();
    }
    const totalSeconds = (Date.now() - started) / 1000;
    const [loaded] = await during.done;
    await during.stop();
    const lookupsDuring = await factLookups(server.port);
    const delta = (a: { memory: number; database: number }, b: { memory: number; database: number }) => ({ memory: b.memory - a.memory, database: b.database - a.database });

    // What the tenant holds now is exactly what the directory sent.
    const listed = await send(agent, server.port, 'GET', '/scim/v2/Users?count=1', scim);
    const groupsListed = await send(agent, server.port, 'GET', '/scim/v2/Groups?count=1&excludedAttributes=members', scim);
    const one = await send(agent, server.port, 'GET', `/scim/v2/Groups/${groupIds[0]}`, scim);
    const total = (listed.body as { totalResults?: number }).totalResults;
    const totalGroups = (groupsListed.body as { totalResults?: number }).totalResults;
    const firstMembers = ((one.body as { members?: unknown[] }).members ?? []).length;
    const expectedFirst = Array.from({ length: USERS }, (_, i) => groupsOf(i).includes(0)).filter(Boolean).length;
    if (total !== USERS || totalGroups !== GROUPS || firstMembers !== expectedFirst) {
      throw new Error(`after provisioning: ${total} users (sent ${USERS}), ${totalGroups} groups (sent ${GROUPS}), ${firstMembers} members in the first group (sent ${expectedFirst})`);
    }

    const ratio = Math.round((loaded!.p99_ms / Math.max(quiet!.p99_ms, 0.001)) * 100) / 100;
    log(`  ${USERS} users in ${phases[0]!.seconds} s (${phases[0]!.requests_per_s}/s); whole run ${totalSeconds.toFixed(1)} s`);
    log(`  other tenant's decision p99: ${quiet!.p99_ms} ms alone, ${loaded!.p99_ms} ms during provisioning (${ratio}x; target <= 3x)`);
    log(`  decision facts lookups alone ${JSON.stringify(delta(lookupsBefore, lookupsQuiet))}, during ${JSON.stringify(delta(lookupsQuiet, lookupsDuring))}`);
    return {
      users: USERS,
      groups: GROUPS,
      memberships: USERS * groupsOf(0).length,
      patch_batch: PATCH_BATCH,
      concurrency: CONCURRENCY,
      phases,
      users_per_s: phases[0]!.requests_per_s,
      users_per_s_whole_run: Math.round((USERS / totalSeconds) * 10) / 10,
      total_seconds: Math.round(totalSeconds * 10) / 10,
      quiet_decision_p99_ms: quiet!.p99_ms,
      during_decision_p99_ms: loaded!.p99_ms,
      decision_requests_during: loaded!.total,
      decision_non_2xx_during: loaded!.total - loaded!['2xx'],
      fact_lookups_quiet: delta(lookupsBefore, lookupsQuiet),
      fact_lookups_during: delta(lookupsQuiet, lookupsDuring),
      p99_ratio: ratio,
      target_p99_ratio: 3,
      met: ratio <= 3 && loaded!.total - loaded!['2xx'] === 0,
    };
  } finally {
    agent.destroy();
    await server.stop();
  }
}

function groupName(g: number): string {
  return `Bench group ${String(g).padStart(3, '0')}`;
}

/** A user as Entra ID sends it. */
function userBody(i: number, slug: string) {
  const n = String(i).padStart(5, '0');
  const email = `user-${n}@${slug}.example.test`;
  return {
    schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'],
    userName: email,
    externalId: `bench-user-${n}`,
    active: true,
    displayName: `Bench User ${n}`,
    name: { givenName: 'Bench', familyName: `User ${n}`, formatted: `Bench User ${n}` },
    emails: [{ value: email, type: 'work', primary: true }],
  };
}
