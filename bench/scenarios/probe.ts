/**
 * An independent probe on its own thread: one request at a time, one every INTERVAL_MS, each on
 * a new connection (as a monitoring probe or `curl` in a loop asks), for `durationS`. Unlike a
 * closed-loop caller (one keep-alive connection asking again the moment it is answered), the
 * probe's requests arrive at moments unrelated to the service's own rhythm, after idle gaps, so
 * they land in the middle of whatever the service is doing (a batch of a flood's requests read
 * in one turn of the event loop, a garbage collection), and each pays for its connection too.
 * The worker posts `{type: 'probe-results', result}` when done.
 */
import http from 'node:http';
import path from 'node:path';
import { parentPort, Worker, workerData } from 'node:worker_threads';

export interface ProbeRun {
  url: string;
  headers: Record<string, string>;
  durationS: number;
  /** Milliseconds between the starts of two requests (default 200: about 5 a second). */
  intervalMs?: number;
}

export interface ProbeResult {
  method: string;
  samples: number;
  non_2xx: number;
  p50_ms: number;
  p99_ms: number;
  max_ms: number;
}

function once(url: URL, headers: Record<string, string>): Promise<{ status: number; ms: number }> {
  const started = process.hrtime.bigint();
  return new Promise((resolve, reject) => {
    const req = http.request({ host: url.hostname, port: url.port, path: `${url.pathname}${url.search}`, headers, agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, ms: Number(process.hrtime.bigint() - started) / 1e6 }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

function quantile(sorted: number[], q: number): number {
  if (!sorted.length) return 0;
  return Math.round(sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]! * 100) / 100;
}

async function probe(run: ProbeRun): Promise<ProbeResult> {
  const url = new URL(run.url);
  const interval = run.intervalMs ?? 200;
  const times: number[] = [];
  let non2xx = 0;
  const end = Date.now() + run.durationS * 1000;
  let next = Date.now();
  while (Date.now() < end) {
    const r = await once(url, run.headers);
    times.push(r.ms);
    if (r.status < 200 || r.status > 299) non2xx++;
    next += interval;
    const wait = next - Date.now();
    if (wait > 0) await new Promise((done) => setTimeout(done, wait));
    else next = Date.now(); // a slow answer: the next starts now, never two at once
  }
  times.sort((a, b) => a - b);
  return {
    method: `probe: one request at a time every ${interval} ms, each on a new connection`,
    samples: times.length,
    non_2xx: non2xx,
    p50_ms: quantile(times, 0.5),
    p99_ms: quantile(times, 0.99),
    max_ms: quantile(times, 1),
  };
}

if (parentPort && workerData && (workerData as { probe?: ProbeRun }).probe) {
  void probe((workerData as { probe: ProbeRun }).probe).then((result) => parentPort!.postMessage({ type: 'probe-results', result }));
}

/** Runs the probe on a thread of its own; resolves with its figures. */
export function runProbe(run: ProbeRun): Promise<ProbeResult> {
  const worker = new Worker(path.join(__dirname, 'probe.js'), { workerData: { probe: run } });
  return new Promise<ProbeResult>((resolve, reject) => {
    worker.on('message', (m: { type?: string; result?: ProbeResult }) => {
      if (m && m.type === 'probe-results') {
        resolve(m.result!);
        void worker.terminate();
      }
    });
    worker.once('error', reject);
  });
}
