/**
 * One fresh database per test run on the real PostgreSQL (TEST_PG_URL, default the local
 * cluster), migrated once; dropped by global-teardown.
 */
import crypto from 'node:crypto';
import { Client } from 'pg';
import pino from 'pino';
import { migrate } from '../../src/db/database';
import { startPgBouncer, type PgBouncer } from '../helpers/pgbouncer';

export const ADMIN_URL = process.env.TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

export default async function globalSetup(): Promise<void> {
  const name = `tenant_service_test_${Date.now()}_${crypto.randomBytes(3).toString('hex')}`;
  const client = new Client({ connectionString: ADMIN_URL });
  await client.connect();
  try {
    await client.query(`create database ${name}`);
  } finally {
    await client.end();
  }
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  process.env.TEST_DATABASE_URL = url.toString();
  process.env.TEST_DATABASE_NAME = name;
  await migrate(url.toString(), 'default', pino({ level: 'silent' }));
  if (process.env.TEST_PGBOUNCER === '1') {
    // The service under test talks to the database through a PgBouncer in transaction mode
    // (test/helpers/pgbouncer.ts); fixtures and migrations still connect directly.
    const bouncer = await startPgBouncer(ADMIN_URL);
    (globalThis as { __pgbouncer__?: PgBouncer }).__pgbouncer__ = bouncer;
    process.env.TEST_RUNTIME_DATABASE_URL = bouncer.via(url.toString());
  }
}
