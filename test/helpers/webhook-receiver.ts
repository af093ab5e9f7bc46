/**
 * A real HTTP receiver for webhook tests: records every request (headers and raw body) and
 * answers with the status the test chooses per request, or never ('hang').
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  readonly headers: Record<string, string>;
  readonly body: string;
  readonly path: string;
}

export type Answer = number | 'hang';

export interface Receiver {
  readonly url: string;
  readonly received: Received[];
  /** Chooses the answer to the n-th request (0-based); default 200. */
  respond(fn: (n: number, r: Received) => Answer): void;
  /** Requests answered by nobody yet (hanging or being read) right now, and the most ever at once. */
  readonly inFlight: () => number;
  readonly maxInFlight: () => number;
  /** Ends every hanging request (its client sees the connection drop). */
  releaseHanging(): void;
  /** Resolves once `count` requests have arrived (bounded by `boundMs`, then rejects). */
  waitFor(count: number, boundMs?: number): Promise<void>;
  close(): Promise<void>;
}

export async function startReceiver(): Promise<Receiver> {
  const received: Received[] = [];
  let answer: (n: number, r: Received) => Answer = () => 200;
  const hanging = new Set<http.ServerResponse>();
  let open = 0;
  let maxOpen = 0;
  const server = http.createServer((req, res) => {
    open += 1;
    maxOpen = Math.max(maxOpen, open);
    res.once('close', () => {
      open -= 1;
      hanging.delete(res);
    });
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const r: Received = {
        headers: Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(', ') : (v ?? '')])),
        body: Buffer.concat(chunks).toString('utf8'),
        path: req.url ?? '/',
      };
      const n = received.length;
      received.push(r);
      const a = answer(n, r);
      if (a === 'hang') {
        hanging.add(res);
        return;
      }
      res.writeHead(a, a >= 300 && a < 400 ? { Location: `${url}/elsewhere` } : {});
      res.end('receiver body that must never be stored');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    received,
    respond(fn) {
      answer = fn;
    },
    inFlight: () => open,
    maxInFlight: () => maxOpen,
    releaseHanging() {
      for (const res of [...hanging]) res.destroy();
    },
    async waitFor(count, boundMs = 60_000) {
      const deadline = Date.now() + boundMs;
      while (received.length < count) {
        if (Date.now() > deadline) throw new Error(`receiver got ${received.length} of ${count} requests in ${boundMs} ms`);
        await new Promise((r) => setTimeout(r, 50));
      }
    },
    async close() {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}
