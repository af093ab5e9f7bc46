/**
 * Sign-in through the service's own OpenID provider (docs/sign-in.md), with a tenant's OIDC
 * connection to a local identity provider (./upstream-idp.ts, its own process):
 *
 * - federated sign-ins per second: a product's browser goes /oidc/auth?organization=<tenant>
 *   → the sign-in page's redirect to the tenant's connection → the identity provider (which
 *   signs the person in at once) → /sso/oidc/callback (the service exchanges the code with the
 *   identity provider and checks its ID token) → back to /oidc/auth → the product's redirect URI
 *   with a code → the product's POST /oidc/token. BENCH_SIGNIN_PEOPLE people (500) take turns,
 *   BENCH_SIGNIN_CONCURRENCY browsers (16) at once, for BENCH_SIGNIN_SECONDS (20);
 * - refresh-token grants per second: each browser's refresh token exchanged again and again
 *   (every grant rotates it), for the same time;
 * - another tenant's decision p99 during a second sign-in storm, against its p99 alone (target
 *   ≤ 2×): a steady caller, BENCH_SIGNIN_NEIGHBOUR_RATE decisions per second (200) on 4
 *   connections, so the service's CPU per sign-in of the first storm is the sign-ins' alone.
 *
 * Beside them: the service's CPU per sign-in and per refresh (from /proc), and Keycloak's
 * published sizing for the same machine (15 password sign-ins and 120 refresh grants per second
 * per vCPU). Every sign-in and refresh must succeed, or the scenario fails.
 */
import crypto from 'node:crypto';
import { fork } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { startLoad } from './load-worker';
import fs from 'node:fs';
import { procStat, startServerProcess } from './server-process';
import type { BenchContext } from './types';

const PEOPLE = Number(process.env.BENCH_SIGNIN_PEOPLE ?? 500);
const CONCURRENCY = Number(process.env.BENCH_SIGNIN_CONCURRENCY ?? 16);
const SECONDS = Number(process.env.BENCH_SIGNIN_SECONDS ?? 20);
const OTHER_CONNECTIONS = 4;
const NEIGHBOUR_RATE = Number(process.env.BENCH_SIGNIN_NEIGHBOUR_RATE ?? 200);
const QUIET_S = 5;
/** Keycloak's sizing guide, per vCPU: password-based sign-ins and refresh-token grants per second. */
const KEYCLOAK_PER_VCPU = { sign_ins_per_s: 15, refresh_grants_per_s: 120 } as const;
const REDIRECT_URI = 'http://127.0.0.1:9/callback';

interface Idp {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** Its process's CPU time so far (µs). */
  cpuMicros(): number;
  stop(): Promise<void>;
}

/**
 * The CPU time so far (µs) of every PostgreSQL process on this machine (its backends do the
 * service's statements), with that of the processes that ended: a server process reaps its
 * ended backends and workers, whose time it then holds as its children's.
 */
function postgresCpuMicros(): number {
  let sum = 0;
  for (const pid of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      if (fs.readFileSync(`/proc/${pid}/comm`, 'utf8').trim() !== 'postgres') continue;
      const stat = procStat(Number(pid));
      sum += stat.cpuMicros + stat.childrenCpuMicros;
    } catch {
      // gone meanwhile
    }
  }
  return sum;
}

function startIdp(redirectUri: string): Promise<Idp> {
  const child = fork(path.join(__dirname, 'upstream-idp.js'), [redirectUri], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`the upstream IdP exited with ${code}`)));
    child.once('message', (m: { issuer: string; clientId: string; clientSecret: string }) =>
      resolve({ ...m, cpuMicros: () => procStat(child.pid!).cpuMicros, stop: () => new Promise<void>((done) => (child.removeAllListeners('exit'), child.once('exit', () => done()), child.send('stop'))) }),
    );
  });
}

async function api(base: string, method: string, urlPath: string, headers: Record<string, string>, body?: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${base}${urlPath}`, { method, headers: { ...headers, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) }, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  return { status: res.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
}

/** One browser: cookies per origin, redirects followed by hand until the product's redirect URI. */
async function browse(startUrl: string): Promise<URL> {
  const jars = new Map<string, Map<string, string>>();
  let url = startUrl;
  for (let hop = 0; hop < 20; hop++) {
    const origin = new URL(url).origin;
    const jar = jars.get(origin) ?? new Map<string, string>();
    jars.set(origin, jar);
    const res = await fetch(url, { redirect: 'manual', headers: jar.size ? { cookie: [...jar].map(([k, v]) => `${k}=${v}`).join('; ') } : {} });
    for (const set of res.headers.getSetCookie()) {
      const [pair, ...attrs] = set.split(';');
      const eq = pair!.indexOf('=');
      const name = pair!.slice(0, eq).trim();
      const gone = attrs.some((a) => /^\s*max-age=0\s*$/i.test(a) || (/^\s*expires=/i.test(a) && Date.parse(a.split('=')[1]!) < Date.now()));
      if (gone) jar.delete(name);
      else jar.set(name, pair!.slice(eq + 1).trim());
    }
    const text = await res.text();
    const location = res.headers.get('location');
    if (res.status < 300 || res.status >= 400 || !location) throw new Error(`${url.split('?')[0]} answered ${res.status}: ${text.slice(0, 300)}`);
    const next = new URL(location, url);
    if (next.toString().startsWith(REDIRECT_URI)) return next;
    url = next.toString();
  }
  throw new Error('more than 20 redirects');
}

function pkce(): { verifier: string; challenge: string } {
  const verifier = crypto.randomBytes(32).toString('base64url');
  return { verifier, challenge: crypto.createHash('sha256').update(verifier).digest('base64url') };
}

async function token(base: string, basic: string, form: Record<string, string>): Promise<{ id_token?: string; access_token?: string; refresh_token?: string }> {
  const res = await fetch(`${base}/oidc/token`, { method: 'POST', headers: { Authorization: basic, 'Content-Type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(form).toString() });
  const body = (await res.json()) as Record<string, string>;
  if (res.status !== 200) throw new Error(`POST /oidc/token (${form.grant_type}) answered ${res.status}: ${JSON.stringify(body)}`);
  return body;
}

export interface SignInBenchResult {
  people: number;
  concurrency: number;
  seconds: number;
  federated_sign_ins_per_s: number;
  sign_in_p50_ms: number;
  sign_in_p99_ms: number;
  service_cpu_ms_per_sign_in: number;
  /** The tenant's identity provider (its own process) per sign-in. */
  upstream_idp_cpu_ms_per_sign_in: number;
  /** This process: the browsers and the product's token requests. */
  browsers_cpu_ms_per_sign_in: number;
  /** PostgreSQL's processes per sign-in. */
  database_cpu_ms_per_sign_in: number;
  /** The machine's cores over the four's CPU per sign-in: what this machine could do with every core busy. */
  machine_ceiling_sign_ins_per_s: number;
  refresh_grants_per_s: number;
  refresh_p99_ms: number;
  service_cpu_ms_per_refresh: number;
  /** This process: the product's refresh requests. */
  clients_cpu_ms_per_refresh: number;
  database_cpu_ms_per_refresh: number;
  machine_ceiling_refresh_grants_per_s: number;
  keycloak_published_for_this_machine: { sign_ins_per_s: number; refresh_grants_per_s: number };
  quiet_decision_p99_ms: number;
  during_decision_p99_ms: number;
  decision_p99_ratio: number;
  targets: { sign_ins_per_s: number; refresh_grants_per_s: number; decision_p99_ratio: number };
  met: boolean;
}

function pct(sorted: number[], q: number): number {
  if (!sorted.length) return 0;
  return Math.round(sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((q / 100) * sorted.length) - 1))]! * 10) / 10;
}

/** Runs `job` with CONCURRENCY in flight for SECONDS; every job must succeed. */
async function storm(job: (worker: number) => Promise<void>): Promise<{ count: number; seconds: number; sorted: number[] }> {
  const until = Date.now() + SECONDS * 1000;
  const times: number[] = [];
  const started = Date.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async (_, w) => {
      while (Date.now() < until) {
        const t0 = process.hrtime.bigint();
        await job(w);
        times.push(Number(process.hrtime.bigint() - t0) / 1e6);
      }
    }),
  );
  return { count: times.length, seconds: (Date.now() - started) / 1000, sorted: times.sort((a, b) => a - b) };
}

export async function signInScenario(ctx: BenchContext, opts: { admin: Record<string, string>; neighbour: Record<string, string> }): Promise<SignInBenchResult> {
  const { log } = ctx;
  const server = await startServerProcess('service', { ...ctx.serviceEnv, SERVICE_SSO_ALLOW_PRIVATE_NETWORKS: 'true', SERVICE_LOG_LEVEL: 'warn' });
  const base = `http://127.0.0.1:${server.port}`;
  const idp = await startIdp(`${base}/sso/oidc/callback`);
  try {
    const slug = `signin-co-${Date.now()}`;
    const made = await api(base, 'POST', '/api/setup/tenant', opts.admin, { name: 'Sign-in Co', slug });
    if (made.status !== 201) throw new Error(`createTenant answered ${made.status}: ${JSON.stringify(made.body)}`);
    const connection = await api(base, 'POST', '/api/tenant/sso/connections', { ...opts.admin, 'X-Tenant': slug }, { type: 'oidc', name: 'Bench IdP', issuer: idp.issuer, client_id: idp.clientId, client_secret: idp.clientSecret });
    if (connection.status !== 201) throw new Error(`createSsoConnection answered ${connection.status}: ${JSON.stringify(connection.body)}`);
    const client = await api(base, 'POST', '/api/setup/clients', opts.admin, { name: 'Bench product', type: 'confidential', redirect_uris: [REDIRECT_URI] });
    if (client.status !== 201) throw new Error(`createOidcClient answered ${client.status}: ${JSON.stringify(client.body)}`);
    const clientId = client.body.client_id as string;
    const basic = `Basic ${Buffer.from(`${encodeURIComponent(clientId)}:${encodeURIComponent(client.body.client_secret as string)}`).toString('base64')}`;

    let turn = 0;
    const refreshTokens: string[] = [];
    async function signIn(worker: number): Promise<void> {
      const person = `person-${turn++ % PEOPLE}`;
      const { verifier, challenge } = pkce();
      const state = crypto.randomBytes(12).toString('base64url');
      const q = new URLSearchParams({
        client_id: clientId,
        redirect_uri: REDIRECT_URI,
        response_type: 'code',
        scope: 'openid email profile offline_access',
        state,
        nonce: crypto.randomBytes(12).toString('base64url'),
        code_challenge: challenge,
        code_challenge_method: 'S256',
        organization: slug,
        login_hint: `${person}@signin-bench.test`,
      });
      const back = await browse(`${base}/oidc/auth?${q}`);
      const code = back.searchParams.get('code');
      if (!code || back.searchParams.get('state') !== state) throw new Error(`the sign-in came back without a code: ${back.search}`);
      const tokens = await token(base, basic, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI, code_verifier: verifier });
      if (!tokens.id_token || !tokens.refresh_token) throw new Error('the token answer lacks an ID token or a refresh token');
      refreshTokens[worker] = tokens.refresh_token;
    }

    log(`sign-in: warming up (${PEOPLE} people provisioned by their first sign-in)`);
    for (let i = 0; i < PEOPLE; i += CONCURRENCY) await Promise.all(Array.from({ length: Math.min(CONCURRENCY, PEOPLE - i) }, (_, w) => signIn(w)));

    log(`sign-in: federated sign-ins, ${CONCURRENCY} browsers, ${SECONDS} s`);
    const cpu0 = await server.cpuMicros();
    const [idp0, own0, db0] = [idp.cpuMicros(), process.cpuUsage(), postgresCpuMicros()];
    const signIns = await storm(signIn);
    const cpu1 = await server.cpuMicros();
    const [idpCpu, ownCpu, dbCpu] = [idp.cpuMicros() - idp0, process.cpuUsage(own0), postgresCpuMicros() - db0];

    const decisionUrl = `${base}/api/tenant/decision`;
    const neighbourRun = (durationS: number) => ({ url: decisionUrl, connections: OTHER_CONNECTIONS, durationS, headers: opts.neighbour, overallRate: NEIGHBOUR_RATE });
    log(`sign-in: another tenant's decisions alone (${QUIET_S} s, ${NEIGHBOUR_RATE}/s)`);
    const quietLoad = startLoad([neighbourRun(QUIET_S)]);
    const [quiet] = await quietLoad.done;
    await quietLoad.stop();
    log(`sign-in: the same decisions during a second storm of sign-ins (${SECONDS} s)`);
    const during = startLoad([neighbourRun(3600)]);
    try {
      await storm(signIn);
    } finally {
      during.finish();
    }
    const [loaded] = await during.done;
    await during.stop();
    const cpuBeforeRefresh = await server.cpuMicros();

    log(`sign-in: refresh-token grants, ${CONCURRENCY} clients, ${SECONDS} s`);
    const [ownBeforeRefresh, dbBeforeRefresh] = [process.cpuUsage(), postgresCpuMicros()];
    const refreshes = await storm(async (w) => {
      const t = await token(base, basic, { grant_type: 'refresh_token', refresh_token: refreshTokens[w]! });
      if (!t.refresh_token || !t.access_token) throw new Error('a refresh answered no rotated refresh token');
      refreshTokens[w] = t.refresh_token;
    });
    const cpu2 = await server.cpuMicros();
    const refreshCpu = cpu2 - cpuBeforeRefresh;
    const [clientsCpu, dbRefreshCpu] = [process.cpuUsage(ownBeforeRefresh), postgresCpuMicros() - dbBeforeRefresh];

    const vcpus = os.availableParallelism();
    const ms = (micros: number, count: number) => Math.round((micros / 1000 / count) * 100) / 100;
    const perS = (r: { count: number; seconds: number }) => Math.round((r.count / r.seconds) * 10) / 10;
    const ratio = Math.round((loaded!.p99_ms / Math.max(quiet!.p99_ms, 0.001)) * 100) / 100;
    const result: SignInBenchResult = {
      people: PEOPLE,
      concurrency: CONCURRENCY,
      seconds: SECONDS,
      federated_sign_ins_per_s: perS(signIns),
      sign_in_p50_ms: pct(signIns.sorted, 50),
      sign_in_p99_ms: pct(signIns.sorted, 99),
      service_cpu_ms_per_sign_in: ms(cpu1 - cpu0, signIns.count),
      upstream_idp_cpu_ms_per_sign_in: ms(idpCpu, signIns.count),
      browsers_cpu_ms_per_sign_in: ms(ownCpu.user + ownCpu.system, signIns.count),
      database_cpu_ms_per_sign_in: ms(dbCpu, signIns.count),
      machine_ceiling_sign_ins_per_s: Math.round((vcpus * 1e6) / ((cpu1 - cpu0 + idpCpu + ownCpu.user + ownCpu.system + dbCpu) / signIns.count)),
      refresh_grants_per_s: perS(refreshes),
      refresh_p99_ms: pct(refreshes.sorted, 99),
      service_cpu_ms_per_refresh: ms(refreshCpu, refreshes.count),
      clients_cpu_ms_per_refresh: ms(clientsCpu.user + clientsCpu.system, refreshes.count),
      database_cpu_ms_per_refresh: ms(dbRefreshCpu, refreshes.count),
      machine_ceiling_refresh_grants_per_s: Math.round((vcpus * 1e6) / ((refreshCpu + clientsCpu.user + clientsCpu.system + dbRefreshCpu) / refreshes.count)),
      keycloak_published_for_this_machine: { sign_ins_per_s: KEYCLOAK_PER_VCPU.sign_ins_per_s * vcpus, refresh_grants_per_s: KEYCLOAK_PER_VCPU.refresh_grants_per_s * vcpus },
      quiet_decision_p99_ms: quiet!.p99_ms,
      during_decision_p99_ms: loaded!.p99_ms,
      decision_p99_ratio: ratio,
      targets: { sign_ins_per_s: 150, refresh_grants_per_s: 1000, decision_p99_ratio: 2 },
      met: false,
    };
    result.met = result.federated_sign_ins_per_s >= 150 && result.refresh_grants_per_s >= 1000 && ratio <= 2 && loaded!.total === loaded!['2xx'];
    log(`  ${result.federated_sign_ins_per_s} federated sign-ins/s (p99 ${result.sign_in_p99_ms} ms, ${result.service_cpu_ms_per_sign_in} ms service CPU each, ${result.upstream_idp_cpu_ms_per_sign_in} ms the IdP's, ${result.browsers_cpu_ms_per_sign_in} ms the browsers', ${result.database_cpu_ms_per_sign_in} ms PostgreSQL's; all cores busy: ${result.machine_ceiling_sign_ins_per_s}/s); Keycloak's sizing: ${result.keycloak_published_for_this_machine.sign_ins_per_s}/s`);
    log(`  ${result.refresh_grants_per_s} refresh grants/s (p99 ${result.refresh_p99_ms} ms, ${result.service_cpu_ms_per_refresh} ms CPU each, ${result.clients_cpu_ms_per_refresh} ms the clients', ${result.database_cpu_ms_per_refresh} ms PostgreSQL's; all cores busy: ${result.machine_ceiling_refresh_grants_per_s}/s); Keycloak's sizing: ${result.keycloak_published_for_this_machine.refresh_grants_per_s}/s`);
    log(`  another tenant's decision p99 ${quiet!.p99_ms} ms alone, ${loaded!.p99_ms} ms during the storm (${ratio}x; target <= 2x)`);
    return result;
  } finally {
    await idp.stop();
    await server.stop();
  }
}
