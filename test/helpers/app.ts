/**
 * Builds the real app in-process against the test database, with captured logs.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import type { Express } from 'express';
import type { Knex } from 'knex';
import { createApp } from '../../src/app';
import { loadConfig, type Config } from '../../src/config';
import { openDatabase } from '../../src/db/database';
import type { TenantTokenKeyOptions } from '../../src/domain/tenant-tokens';
import type { AuthenticatorOptions } from '../../src/auth/verify';
import type { RefusalDelay } from '../../src/http/refusal-delay';
import type { AppServices } from '../../src/context/app-services';
import type { SignInCompleter } from '../../src/context/sign-in';
import { createLogger } from '../../src/logger';
import { buildServices, closeServices } from '../../src/build-services';

export interface TestApp {
  app: Express;
  config: Config;
  services: AppServices;
  db: Knex;
  /** Every log line written so far, parsed. */
  logs: Array<Record<string, unknown>>;
  close(): Promise<void>;
}

/** One data dir per test process, so the local signing key is shared by its apps. */
export const TEST_DATA_DIR = fs.mkdtempSync(path.join(os.tmpdir(), 'tenant-service-test-'));

export function testDatabaseUrl(): string {
  const url = process.env.TEST_DATABASE_URL;
  if (!url) throw new Error('TEST_DATABASE_URL is not set: run the tests through jest (global-setup creates the database)');
  return url;
}

/**
 * The URL the service under test connects with: TEST_RUNTIME_DATABASE_URL when global-setup put
 * a PgBouncer in transaction mode in front of the test database (TEST_PGBOUNCER=1, see
 * `npm run test:pgbouncer`), else the test database itself. Fixtures (ownerConnection) and
 * migrations always connect directly.
 */
export function testRuntimeDatabaseUrl(): string {
  return process.env.TEST_RUNTIME_DATABASE_URL ?? testDatabaseUrl();
}

/** The env a test app starts from: test database, test data dir, rate limits off unless asked. */
export function testEnv(overrides: Record<string, string | undefined> = {}): Record<string, string | undefined> {
  return {
    SERVICE_DATABASE_URL: testRuntimeDatabaseUrl(),
    SERVICE_DATA_DIR: TEST_DATA_DIR,
    SERVICE_RATE_LIMIT_ENABLED: 'false',
    SERVICE_LOG_LEVEL: 'info',
    // PgBouncer 1.18 in transaction mode (TEST_PGBOUNCER=1) does not keep prepared statements.
    ...(process.env.TEST_PGBOUNCER === '1' ? { SERVICE_DATABASE_PREPARED_STATEMENTS: 'false' } : {}),
    ...overrides,
  };
}

/** Creates an app on the test database. `env` overrides the test defaults. */
export async function startTestApp(env: Record<string, string | undefined> = {}, opts: { poolMax?: number; authOptions?: AuthenticatorOptions; statementTimeoutMs?: number; tenantTokenKeys?: TenantTokenKeyOptions; refusalDelay?: RefusalDelay; signInCompleter?: SignInCompleter } = {}): Promise<TestApp> {
  const config = loadConfig(testEnv(env));
  const logs: Array<Record<string, unknown>> = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, cb) {
      for (const line of chunk.toString('utf8').split('\n')) {
        if (line.trim()) logs.push(JSON.parse(line) as Record<string, unknown>);
      }
      cb();
    },
  });
  const logger = createLogger(config.logLevel, sink);
  const db = openDatabase({ url: config.databaseUrl!, poolMax: opts.poolMax ?? 5, statementTimeoutMs: opts.statementTimeoutMs, logger, preparedStatements: config.databasePreparedStatements });
  const services: AppServices = { ...(await buildServices(config, { db, logger, tenantTokenKeys: opts.tenantTokenKeys })), authOptions: opts.authOptions, refusalDelay: opts.refusalDelay, signInCompleter: opts.signInCompleter };
  const app = await createApp(config, services);
  return {
    app,
    config,
    services,
    db,
    logs,
    async close() {
      await closeServices(services);
      await db.destroy();
    },
  };
}
