/**
 * One fresh database per test run on the real PostgreSQL (TEST_PG_URL, default the local
 * cluster), migrated once; dropped by global-teardown.
 */
import crypto from 'node:crypto';
import { Client } from 'pg';
import pino from 'pino';
import { migrate } from '../../src/db/database';
import { startPgBouncer, type PgBouncer } from '../helpers/pgbouncer';

const adminUrl = () => process.env.TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
export const ADMIN_URL = adminUrl();

export default async function globalSetup(): Promise<void> {
  const admin = adminUrl(); // read now: a test runs this with its own TEST_PG_URL
  // PgBouncer first (TEST_PGBOUNCER=1): when it cannot start, nothing has been created yet.
  const bouncer = process.env.TEST_PGBOUNCER === '1' ? await startPgBouncer(admin) : null;
  const name = `tenant_service_test_${Date.now()}_${crypto.randomBytes(3).toString('hex')}`;
  const url = new URL(admin);
  url.pathname = `/${name}`;
  let created = false;
  try {
    const client = new Client({ connectionString: admin });
    await client.connect();
    try {
      await client.query(`create database ${name}`);
      created = true;
    } finally {
      await client.end();
    }
    await migrate(url.toString(), 'default', pino({ level: 'silent' }));
  } catch (err) {
    // global-teardown does not run after a failed setup: leave nothing behind.
    await bouncer?.stop();
    if (created) {
      const client = new Client({ connectionString: admin });
      await client.connect();
      await client.query(`drop database if exists ${name} with (force)`).finally(() => client.end());
    }
    throw err;
  }
  process.env.TEST_DATABASE_URL = url.toString();
  process.env.TEST_DATABASE_NAME = name;
  if (bouncer) {
    // The service under test talks to the database through a PgBouncer in transaction mode
    // (test/helpers/pgbouncer.ts); fixtures and migrations still connect directly.
    (globalThis as { __pgbouncer__?: PgBouncer }).__pgbouncer__ = bouncer;
    process.env.TEST_RUNTIME_DATABASE_URL = bouncer.via(url.toString());
  }
}
