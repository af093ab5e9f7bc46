/**
 * Process entry: parse config, open the database (embedded when SERVICE_DATABASE_URL is unset),
 * migrate, listen, and drain on SIGTERM/SIGINT.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import { createApp } from './app';
import { createAppServer } from './http/node-server';
import { readContractOperations } from './http/contract';
import { errorFormatOfPath } from './http/match';
import type { AppServices } from './context/app-services';
import { ConfigError, loadConfig, redactUrl, type Config } from './config';
import { migrate, NewerDatabaseError, openDatabase, openOwnerDatabase } from './db/database';
import { DatabaseRolesError } from './db/database-roles';
import type { Database } from './db/tenant-scope';
import { EmbeddedDatabaseError, startEmbeddedPostgres, type EmbeddedDatabase } from './embedded-postgres/start';
import { clearSpool } from './domain/import-spool';
import { createLogger, flushLogger } from './logger';
import { buildServices, closeServices } from './build-services';
import { startRetentionWorker } from './workers/retention';
import { startScheduledDeletionWorker } from './workers/scheduled-deletion';
import { startDomainRecheckWorker } from './workers/domain-recheck';
import { txtLookup } from './domain/domains/dns';
import { DEFAULT_CONCURRENCY, startWebhookWorker } from './workers/webhook-delivery';

const DRAIN_TIMEOUT_MS = 25_000;

async function main(): Promise<void> {
  let config: Config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`tenant-service: ${err.message}\n`);
      process.exit(78); // EX_CONFIG
    }
    throw err;
  }
  const logger = createLogger(config.logLevel);
  // A stray rejected promise (a background reconnect, a client's late error) is logged, not a
  // reason to drop every in-flight request of the instance.
  process.on('unhandledRejection', (reason) => logger.error({ err: reason }, 'Unhandled promise rejection'));

  let embedded: EmbeddedDatabase | null = null;
  let db: Database | null = null;
  let services: AppServices | null = null;
  let url = config.databaseUrl;
  let migrated = false;
  // Node looks for requests past their timeout every connectionsCheckingInterval (30 s by
  // default): a shorter timeout is looked for more often, so it holds to within a quarter of itself.
  const appServer = createAppServer({
    connectionsCheckingInterval: Math.min(30_000, Math.max(25, Math.floor(config.requestTimeoutMs / 4))),
    // What the HTTP parser refuses under the SCIM base path is answered in SCIM's error body.
    errorFormatOf: errorFormatOfPath(readContractOperations()),
  });
  const server = appServer.server;
  try {
    if (!url) {
      embedded = await startEmbeddedPostgres(config.dataDir, logger);
      url = embedded.url;
    }
    logger.info({ database: embedded ? 'embedded' : redactUrl(url) }, 'Opening database');
    // Migrations hold a session advisory lock: behind a transaction pooler they need a direct URL.
    await migrate(embedded ? url : (config.migrationDatabaseUrl ?? url), config.defaultTenantSlug, logger);
    migrated = true;
    db = openDatabase({ url, logger, preparedStatements: config.databasePreparedStatements, queryTimeoutMs: config.databaseQueryTimeoutMs });
    services = await buildServices(config, { db, logger, embeddedDatabase: embedded !== null, databaseUrl: url });
    // The tenant-token key set is made (or read) before the first request: a boot, not a caller, pays for it.
    await services.tenantTokenKeys.publicJwks();
    // Uploads a crashed instance was receiving: removed before this one receives any.
    const leftover = await clearSpool(config.dataDir).catch((err: unknown) => {
      logger.warn({ err }, 'Could not empty the import spool directory under SERVICE_DATA_DIR');
      return 0;
    });
    if (leftover > 0) logger.info({ files: leftover }, 'Removed import uploads left by an earlier run');
    appServer.serve(await createApp(config, services));
    server.keepAliveTimeout = 65_000; // longer than common load balancer idle timeouts
    // Never above the request timeout: Node swaps the two when it is, and a short
    // SERVICE_REQUEST_TIMEOUT_MS would then be the headers' timeout and the body's 66 s.
    server.headersTimeout = Math.min(66_000, config.requestTimeoutMs);
    // The time a client has to send its whole request (headers and body), so a slowloris is cut
    // off (408). Node stops counting once the body has arrived: a request whose answer takes
    // longer (a tenant import after its upload, see src/domain/import-spool.ts) is not cut off.
    server.requestTimeout = config.requestTimeoutMs;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(config.port, config.host, () => resolve());
    });
  } catch (err) {
    // One line that says what to do, and nothing left behind (pool, embedded PostgreSQL, its lock).
    logger.fatal(startupFailure(err, config, migrated));
    if (services) await closeServices(services).catch(() => undefined);
    await db?.destroy().catch(() => undefined);
    await embedded?.stop().catch(() => undefined);
    await flushLogger(logger);
    process.exit(1);
  }
  await serve(config, logger, server, db, services, embedded, embedded ? url : (config.migrationDatabaseUrl ?? url), url);
}

/** The one line a failed start logs: what went wrong and what to do, never a stack. */
function startupFailure(err: unknown, config: Config, migrated: boolean): string {
  if (err instanceof EmbeddedDatabaseError || err instanceof DatabaseRolesError || err instanceof NewerDatabaseError) return err.message;
  const code = (err as NodeJS.ErrnoException | null)?.code;
  const where = `${config.host}:${config.port}`;
  if (code === 'EADDRINUSE') return `Port ${config.port} is already in use on ${config.host}: stop what listens there, or set SERVICE_PORT to a free port`;
  if (code === 'EACCES' && (err as { syscall?: string }).syscall === 'listen') return `Not allowed to listen on ${where}: set SERVICE_PORT to a port above 1023, or grant the capability to bind it`;
  // insufficient_privilege after the migrations: the runtime role lacks the grants they gave it.
  // (knex puts the statement before PostgreSQL's message, after " - ".)
  if (code === '42501' && migrated) return `tenant-service failed to start: ${(err as Error).message.split('\n')[0]!.split(' - ').pop()}: the database's grants to tenant_service_app and tenant_service_reader are missing (a pg_restore with --no-privileges?), see docs/operations.md "Backup and restore"`;
  if (code === 'EADDRNOTAVAIL') return `SERVICE_HOST ${config.host} is not an address of this machine: set SERVICE_HOST to one (127.0.0.1, 0.0.0.0)`;
  return `tenant-service failed to start: ${(err instanceof Error ? err.message : String(err)).split('\n')[0]}`;
}

async function serve(config: Config, logger: Logger, server: http.Server, db: Database, services: AppServices, embedded: EmbeddedDatabase | null, ownerUrl: string, runtimeUrl: string): Promise<void> {
  // Background work of every instance: webhook deliveries (SKIP LOCKED claims, so instances
  // share the outbox) and the daily retention purge, which needs the owner's connection
  // (the migrations' URL: the schema owner; the pool above runs as the runtime role).
  // The worker has a pool of its own: an attempt holds its connection while the receiver answers
  // (up to the 10 s timeout), and requests must never wait for those.
  const webhookDb = openDatabase({ url: runtimeUrl, logger, poolMax: DEFAULT_CONCURRENCY + 1, preparedStatements: config.databasePreparedStatements, queryTimeoutMs: config.databaseQueryTimeoutMs });
  const webhookWorker = startWebhookWorker({
    db: webhookDb,
    logger,
    concurrency: DEFAULT_CONCURRENCY,
    allowPrivateNetworks: config.webhookAllowPrivateNetworks,
    encryptionSecret: config.keyEncryptionSecret,
    onAttempt: (outcome) => services.metrics?.webhookDelivery?.(outcome),
  });
  const retention = startRetentionWorker({ openOwner: () => openOwnerDatabase(ownerUrl), retentionDays: config.eventRetentionDays, logger });
  // Scheduled tenant deletions run on the request pool: a deletion's batches are short transactions.
  const scheduledDeletions = startScheduledDeletionWorker({ db, multiTenantMode: config.multiTenantMode, logger });
  // Verified domains are asked again every 24 h, each on one instance.
  const domainRecheck = startDomainRecheckWorker({ db, lookup: txtLookup(config.dnsServers), logger });
  const addr = server.address() as AddressInfo;
  logger.info(
    { host: addr.address, port: addr.port, auth_provider: config.authProvider, multi_tenant_mode: config.multiTenantMode },
    'tenant-service listening',
  );

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'Shutting down: finishing in-flight requests');
    const force = setTimeout(() => {
      logger.warn('Drain timeout: closing remaining connections');
      server.closeAllConnections();
    }, DRAIN_TIMEOUT_MS);
    force.unref();
    // Stop accepting; idle keep-alive sockets close now, busy ones after their response. The
    // webhook worker claims nothing more; an attempt in flight finishes (at most its 10 s
    // timeout) and is recorded, so none is lost or left half-done.
    await Promise.all([
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      }),
      webhookWorker.stop(),
      retention.stop(),
      scheduledDeletions.stop(),
      domainRecheck.stop(),
    ]);
    clearTimeout(force);
    await closeServices(services);
    await db.destroy();
    await webhookDb.destroy();
    if (embedded) await embedded.stop();
    logger.info('Stopped');
    // Log lines are written asynchronously: every buffered line is out before the process ends.
    await flushLogger(logger);
    process.exit(0);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
}

main().catch((err: unknown) => {
  process.stderr.write(`tenant-service failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
