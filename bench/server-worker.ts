/**
 * A server on its own thread (or, started with child_process.fork, in its own process, so its
 * CPU time can be measured: the `cpu` message answers process.cpuUsage()), so autocannon (on the main thread) does not share an event loop
 * with it. `kind: 'ceiling'` is a bare express + helmet endpoint; `kind: 'service'` is the real
 * app built exactly as src/server.ts builds it (same pipeline, default pool size, info logs).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { parentPort, workerData } from 'node:worker_threads';
import express from 'express';
import helmet from 'helmet';
import pino from 'pino';
import { createApp } from '../src/app';
import { LOCAL_ISSUER, loadOrCreateLocalKeys } from '../src/auth/local-keys';
import { buildReferenceApp, type ReferenceKind } from './reference-server';
import { loadConfig } from '../src/config';
import { openDatabase } from '../src/db/database';
import { createLogger } from '../src/logger';
import { buildServices, closeServices } from '../src/build-services';

interface WorkerInput {
  kind: 'ceiling' | 'service' | ReferenceKind;
  env: Record<string, string>;
  /** Where the service writes its logs (the bench sends them to /dev/null). */
  logFile: string;
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
  } else if (input.kind === 'reference-tenant' || input.kind === 'reference-boards') {
    const ref = buildReferenceApp(input.kind, {
      databaseUrl: input.env.SERVICE_DATABASE_URL!,
      publicKey: loadOrCreateLocalKeys(input.env.SERVICE_DATA_DIR!).publicKey,
      issuer: LOCAL_ISSUER,
    });
    app = ref.app;
    close = ref.close;
  } else {
    const config = loadConfig(input.env);
    const logger = createLogger(config.logLevel, pino.destination({ dest: input.logFile, sync: false }));
    const db = openDatabase({ url: config.databaseUrl!, logger, preparedStatements: config.databasePreparedStatements });
    const services = await buildServices(config, { db, logger });
    app = await createApp(config, services);
    close = async () => {
      await closeServices(services);
      await db.destroy();
    };
  }
  const server = http.createServer(app);
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  channel.postMessage({ port: (server.address() as AddressInfo).port });
  channel.on('message', (m: string) => {
    if (m === 'cpu') {
      const u = process.cpuUsage();
      channel.postMessage({ cpu_us: u.user + u.system });
      return;
    }
    if (m === 'rss') {
      channel.postMessage({ rss_bytes: process.memoryUsage.rss() });
      return;
    }
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
