import { Client } from 'pg';

import type { PgBouncer } from '../helpers/pgbouncer';

export default async function globalTeardown(): Promise<void> {
  await (globalThis as { __pgbouncer__?: PgBouncer }).__pgbouncer__?.stop();
  const name = process.env.TEST_DATABASE_NAME;
  if (!name || process.env.KEEP_TEST_DATABASE) return;
  const client = new Client({ connectionString: process.env.TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres' });
  await client.connect();
  try {
    await client.query(`drop database if exists ${name} with (force)`);
  } finally {
    await client.end();
  }
}
