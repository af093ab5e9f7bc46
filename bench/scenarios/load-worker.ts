/**
 * Load on its own thread: background load (1 MiB bodies, a 32-connection flood) that must not
 * slow the thread measuring a legitimate caller's latency, or a measured caller that must not be
 * slowed by the work of the thread driving the load (a directory's provisioning client).
 * `workerData.runs` are autocannon options run together; a `{type: 'finish'}` message ends them
 * early; the worker posts `{type: 'load-results', results}` when all have ended.
 */
import { parentPort, workerData } from 'node:worker_threads';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import autocannon from 'autocannon';

export interface LoadRun {
  url: string;
  method?: 'GET' | 'POST';
  connections: number;
  durationS: number;
  headers?: Record<string, string>;
  body?: string;
  /** Each request's body: this, with every `{n}` replaced by the request's number on this thread (unique SCIM userNames). */
  numberedBody?: string;
  /** Requests per second across all connections (a steady caller); absent: as fast as answered. */
  overallRate?: number;
}

export interface LoadResult {
  total: number;
  '2xx': number;
  '4xx': number;
  '5xx': number;
  errors: number;
  timeouts: number;
  requests_per_s: number;
  p50_ms: number;
  p99_ms: number;
  /** Answers per status code. */
  statuses?: Record<string, number>;
}

if (parentPort && workerData && (workerData as { loadWorker?: boolean }).loadWorker) {
  const { runs } = workerData as { runs: LoadRun[] };
  let n = 0;
  const instances = runs.map((r) =>
    autocannon({
      url: r.url,
      method: r.method ?? 'GET',
      connections: r.connections,
      ...(r.overallRate === undefined ? {} : { overallRate: r.overallRate }),
      duration: r.durationS,
      headers: r.headers ?? {},
      body: r.body,
      timeout: 30,
      // A fresh body per request (autocannon then computes its Content-Length).
      ...(r.numberedBody === undefined ? {} : { requests: [{ method: r.method ?? 'GET', setupRequest: (req: Record<string, unknown>) => ({ ...req, body: r.numberedBody!.replace(/\{n\}/g, String(++n)) }) }] }),
    }),
  );
  // Each response's time, in ms with autocannon's sub-millisecond precision (inside a worker
  // thread autocannon returns its latency histogram encoded, for a main thread to aggregate).
  const times = instances.map((instance) => {
    const list: number[] = [];
    instance.on('response', (_client, _status, _bytes, ms) => list.push(ms));
    return list;
  });
  const started = Date.now();
  parentPort.on('message', (m: { type?: string }) => {
    if (m && m.type === 'finish') for (const i of instances) i.stop();
  });
  void Promise.all(instances).then((results) => {
    const seconds = Math.max((Date.now() - started) / 1000, 0.001);
    parentPort!.postMessage({
      type: 'load-results',
      results: results.map((r, i) => ({
        total: r['1xx'] + r['2xx'] + r['3xx'] + r['4xx'] + r['5xx'],
        '2xx': r['2xx'],
        '4xx': r['4xx'],
        '5xx': r['5xx'],
        errors: r.errors,
        timeouts: r.timeouts,
        requests_per_s: Math.round(times[i]!.length / seconds),
        p50_ms: percentile(times[i]!, 0.5),
        p99_ms: percentile(times[i]!, 0.99),
        statuses: Object.fromEntries(Object.entries((r as unknown as { statusCodeStats?: Record<string, { count: number }> }).statusCodeStats ?? {}).map(([k, v]) => [k, v.count])),
      })),
    });
  });
}

/** The `q` quantile of `values` in ms, to 0.01 ms (0 for none). */
function percentile(values: number[], q: number): number {
  if (values.length === 0) return 0;
  const sorted = Float64Array.from(values).sort();
  return Math.round(sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]! * 100) / 100;
}

/** Starts `runs` on a load thread; `done` resolves with their results, `finish` ends them early, `stop` ends the thread. */
export function startLoad(runs: LoadRun[]): { done: Promise<LoadResult[]>; finish: () => void; stop: () => Promise<number> } {
  const worker = new Worker(path.join(__dirname, 'load-worker.js'), { workerData: { loadWorker: true, runs } });
  const done = new Promise<LoadResult[]>((resolve, reject) => {
    // autocannon itself may post progress messages from a worker thread: wait for ours.
    worker.on('message', (m: { type?: string; results?: LoadResult[] }) => {
      if (m && m.type === 'load-results') resolve(m.results!);
    });
    worker.once('error', reject);
  });
  return { done, finish: () => worker.postMessage({ type: 'finish' }), stop: () => worker.terminate() };
}
