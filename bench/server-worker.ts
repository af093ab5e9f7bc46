/**
 * A hand-written server of the bench on its own thread (or, started with child_process.fork, in
 * its own process, so its CPU time can be measured), so autocannon (on the main thread) does not
 * share an event loop with it. `kind: 'ceiling'` is a bare express + helmet endpoint; the
 * `reference-*` kinds are bench/reference-server.ts. The service itself is never assembled here:
 * the bench runs its real entry point (bench/scenarios/server-process.ts).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { parentPort, workerData } from 'node:worker_threads';
import express from 'express';
import helmet from 'helmet';
import { LOCAL_ISSUER, loadOrCreateLocalKeys } from '../src/auth/local-keys';
import { buildReferenceApp, REFERENCE_KINDS, type ReferenceKind } from './reference-server';

interface WorkerInput {
  kind: 'ceiling' | ReferenceKind;
  env: Record<string, string>;
}

/** The parent: the worker thread's port, or the IPC channel of a forked process. */
const channel = parentPort ?? {
  postMessage: (m: unknown) => process.send!(m),
  on: (event: 'message', listener: (m: string) => void) => process.on(event, listener),
};

async function main(): Promise<void> {
  const input = (workerData ?? JSON.parse(process.env.BENCH_WORKER_INPUT!)) as WorkerInput;
  let app: express.Express;
  let close: () => Promise<void> = async () => undefined;
  if (input.kind === 'ceiling') {
    app = express();
    app.disable('x-powered-by');
    app.set('etag', false);
    app.use(helmet());
    app.get('/ping', (_req, res) => {
      res.json({ status: 'ok' });
    });
  } else if ((REFERENCE_KINDS as readonly string[]).includes(input.kind)) {
    const ref = await buildReferenceApp(input.kind, {
      databaseUrl: input.env.SERVICE_DATABASE_URL!,
      publicKey: loadOrCreateLocalKeys(input.env.SERVICE_DATA_DIR!).publicKey,
      issuer: LOCAL_ISSUER,
    });
    app = ref.app;
    close = ref.close;
  } else {
    throw new Error(`no bench server of kind '${String(input.kind)}' (the service runs as dist/src/server.js)`);
  }
  const server = http.createServer(app);
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  channel.postMessage({ port: (server.address() as AddressInfo).port });
  channel.on('message', (m: string) => {
    if (m !== 'stop') return;
    server.closeIdleConnections();
    server.close(() => {
      void close().then(() => process.exit(0));
    });
  });
}

main().catch((err: unknown) => {
  channel.postMessage({ error: err instanceof Error ? err.stack : String(err) });
});
