/**
 * The 17.1 attackers on their own thread, so sending 1 MiB bodies does not slow the thread that
 * measures the legitimate caller's latency.
 */
import { parentPort, workerData } from 'node:worker_threads';
import autocannon from 'autocannon';

const { url, durationS } = workerData as { url: string; durationS: number };
const MIB = 1024 * 1024;
const bodies = [`[${'0,'.repeat(MIB / 2 - 1)}0]`, '['.repeat(MIB / 2) + ']'.repeat(MIB / 2)];

void Promise.all(
  bodies.flatMap((body) =>
    [0, 1].map(() => autocannon({ url, method: 'POST', connections: 1, duration: durationS, headers: { 'Content-Type': 'application/json' }, body, timeout: 30 })),
  ),
).then((results) => {
  parentPort!.postMessage({ type: 'attack-results', results: results.map((r) => ({ total: r['1xx'] + r['2xx'] + r['3xx'] + r['4xx'] + r['5xx'], '2xx': r['2xx'], '4xx': r['4xx'], errors: r.errors, timeouts: r.timeouts })) });
});
