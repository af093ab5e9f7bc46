/**
 * The service on its own thread for bench/scenarios/events.ts, built as src/server.ts builds it
 * (default pool, info logs to /dev/null), with event recording on or off (`recordEvents`). The
 * switch only exists for this measurement: worker threads have their own module instances, so
 * turning recording off here affects this thread alone. The webhook worker is not started (the
 * bench measures writing the outbox, not sending it).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { parentPort, workerData } from 'node:worker_threads';
import pino from 'pino';
import { createApp } from '../../src/app';
import { loadConfig } from '../../src/config';
import { openDatabase } from '../../src/db/database';
import { setEventRecordingForBenchmark } from '../../src/domain/events';
import { createLogger } from '../../src/logger';
import { buildServices, closeServices } from '../../src/build-services';

async function main(): Promise<void> {
  const input = workerData as { env: Record<string, string>; recordEvents: boolean };
  setEventRecordingForBenchmark(input.recordEvents);
  const config = loadConfig(input.env);
  const logger = createLogger(config.logLevel, pino.destination({ dest: '/dev/null', sync: false }));
  const db = openDatabase({ url: config.databaseUrl! });
  const services = await buildServices(config, { db, logger });
  const server = http.createServer(await createApp(config, services));
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  parentPort!.postMessage({ port: (server.address() as AddressInfo).port });
  // How long this thread's event loop stalled, asked for by the bench ('loop-delay' resets it).
  const loop = monitorEventLoopDelay({ resolution: 10 });
  loop.enable();
  parentPort!.on('message', (m: string) => {
    if (m === 'loop-delay') {
      parentPort!.postMessage({ loopDelay: { p99_ms: Math.round(loop.percentile(99) / 1e4) / 100, max_ms: Math.round(loop.max / 1e4) / 100 } });
      loop.reset();
      return;
    }
    if (m !== 'stop') return;
    server.closeIdleConnections();
    server.close(() => {
      void closeServices(services)
        .then(() => db.destroy())
        .then(() => process.exit(0));
    });
  });
}

main().catch((err: unknown) => parentPort!.postMessage({ error: err instanceof Error ? err.stack : String(err) }));
