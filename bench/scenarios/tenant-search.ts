/**
 * Bench scenario (docs/security.md#security-and-robustness): `GET /api/setup/tenants?q=…` with the
 * worst-case searches a caller can send at the maximum length of `q` (255): LIKE wildcards (`%`,
 * `_`), backslashes, repeated and random letters, multibyte text, and short searches that match
 * nearly every tenant. Target: every one under 200 ms (p99 of sequential requests) at 100 000
 * tenants.
 *
 * `q` is escaped into a literal substring (src/domain/tenant-admin.ts containsPattern), so a
 * wildcard run is a literal run that no tenant contains; the trigram indexes serve searches of
 * three or more letters or digits. Also records the query plan of each search, so a plan that
 * stops using the trigram index shows in the results.
 */
import http from 'node:http';
import type { Knex } from 'knex';

export interface TenantSearchCase {
  name: string;
  q_length: number;
  status: number;
  total_count: number | null;
  requests: number;
  p50_ms: number;
  p99_ms: number;
  max_ms: number;
  uses_trigram_index: boolean;
}

export interface TenantSearchResult {
  tenants: number;
  target_ms: number;
  cases: TenantSearchCase[];
  all_under_target: boolean;
}

const TARGET_MS = 200;
const REQUESTS = 20;

/** The searches: each is 255 characters unless it is about short ones. */
export function worstCaseSearches(): Array<{ name: string; q: string }> {
  const rnd = (n: number, alphabet: string) => Array.from({ length: n }, () => alphabet[Math.floor(Math.random() * alphabet.length)]).join('');
  return [
    { name: "255 x '%'", q: '%'.repeat(255) },
    { name: "255 x '_'", q: '_'.repeat(255) },
    { name: "255 x '\\'", q: '\\'.repeat(255) },
    { name: "'%_' alternating", q: '%_'.repeat(127) + '%' },
    { name: "'%a' alternating", q: '%a'.repeat(127) + '%' },
    { name: "255 x 'a'", q: 'a'.repeat(255) },
    { name: 'random letters and digits', q: rnd(255, 'abcdefghijklmnopqrstuvwxyz0123456789') },
    { name: 'random letters and wildcards', q: rnd(255, 'ab%_\\') },
    { name: "'bench tenant 1' repeated", q: 'bench tenant 1'.repeat(19).slice(0, 255) },
    { name: '255 CJK characters', q: '字'.repeat(255) },
    { name: "one letter ('e': matches almost all)", q: 'e' },
    { name: "two letters ('en')", q: 'en' },
    { name: "'bench' (matches almost all, trigram index)", q: 'bench' },
  ];
}

function call(port: number, path: string, headers: Record<string, string>): Promise<{ status: number; ms: number; body: string }> {
  const started = process.hrtime.bigint();
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path, method: 'GET', headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, ms: Number(process.hrtime.bigint() - started) / 1e6, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

const pct = (sorted: number[], p: number) => Math.round(sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]! * 10) / 10;

/** Runs the searches against the running service; `owner` reads plans and the tenant count. */
export async function tenantSearchScenario(opts: {
  port: number;
  headers: Record<string, string>;
  owner: Knex;
  log: (msg: string) => void;
}): Promise<TenantSearchResult> {
  const tenants = Number((await opts.owner('tenants').count<Array<{ n: string }>>({ n: '*' }))[0]!.n);
  opts.log(`tenant search: worst-case q at ${tenants} tenants (target < ${TARGET_MS} ms)`);
  const cases: TenantSearchCase[] = [];
  for (const { name, q } of worstCaseSearches()) {
    const path = `/api/setup/tenants?limit=100&q=${encodeURIComponent(q)}`;
    await call(opts.port, path, opts.headers); // warm-up
    const times: number[] = [];
    let status = 0;
    let total: number | null = null;
    for (let i = 0; i < REQUESTS; i++) {
      const r = await call(opts.port, path, opts.headers);
      times.push(r.ms);
      status = r.status;
      if (r.status === 200) total = (JSON.parse(r.body) as { total_count: number }).total_count;
    }
    times.sort((a, b) => a - b);
    const pattern = `%${q.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
    const plan = await opts.owner.raw<{ rows: Array<{ 'QUERY PLAN': string }> }>(
      'explain select count(*) from tenants where name ilike ? or slug ilike ?',
      [pattern, pattern],
    );
    const c: TenantSearchCase = {
      name,
      q_length: [...q].length,
      status,
      total_count: total,
      requests: REQUESTS,
      p50_ms: pct(times, 50),
      p99_ms: pct(times, 99),
      max_ms: Math.round(times.at(-1)! * 10) / 10,
      uses_trigram_index: plan.rows.some((r) => /_trgm/.test(r['QUERY PLAN'])),
    };
    opts.log(`  ${name}: ${status}, ${total ?? '-'} matches, p50 ${c.p50_ms} ms, p99 ${c.p99_ms} ms${c.uses_trigram_index ? ' (trigram index)' : ''}`);
    cases.push(c);
  }
  return { tenants, target_ms: TARGET_MS, cases, all_under_target: cases.every((c) => c.status === 200 && c.p99_ms < TARGET_MS) };
}
