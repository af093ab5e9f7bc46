/**
 * One fresh database per test run on the real PostgreSQL (TEST_PG_URL, default the local
 * cluster), migrated once; dropped by global-teardown.
 */
import crypto from 'node:crypto';
import { Client } from 'pg';
import pino from 'pino';
import { migrate } from '../../src/db/database';

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
}
