/**
 * Background load on its own thread, so the load (1 MiB bodies, a 32-connection flood) does not
 * slow the thread that measures a legitimate caller's latency. `workerData.runs` are autocannon
 * options run together; the worker posts `{type: 'load-results', results}` when all have ended.
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
}

export interface LoadResult {
  total: number;
  '2xx': number;
  '4xx': number;
  '5xx': number;
  errors: number;
  timeouts: number;
}

if (parentPort && workerData && (workerData as { loadWorker?: boolean }).loadWorker) {
  const { runs } = workerData as { runs: LoadRun[] };
  void Promise.all(
    runs.map((r) => autocannon({ url: r.url, method: r.method ?? 'GET', connections: r.connections, duration: r.durationS, headers: r.headers ?? {}, body: r.body, timeout: 30 })),
  ).then((results) => {
    parentPort!.postMessage({
      type: 'load-results',
      results: results.map((r) => ({ total: r['1xx'] + r['2xx'] + r['3xx'] + r['4xx'] + r['5xx'], '2xx': r['2xx'], '4xx': r['4xx'], '5xx': r['5xx'], errors: r.errors, timeouts: r.timeouts })),
    });
  });
}

/** Starts `runs` on a load thread; `done` resolves with their results, `stop` ends the thread. */
export function startLoad(runs: LoadRun[]): { done: Promise<LoadResult[]>; stop: () => Promise<number> } {
  const worker = new Worker(path.join(__dirname, 'load-worker.js'), { workerData: { loadWorker: true, runs } });
  const done = new Promise<LoadResult[]>((resolve, reject) => {
    // autocannon itself may post progress messages from a worker thread: wait for ours.
    worker.on('message', (m: { type?: string; results?: LoadResult[] }) => {
      if (m && m.type === 'load-results') resolve(m.results!);
    });
    worker.once('error', reject);
  });
  return { done, stop: () => worker.terminate() };
}
