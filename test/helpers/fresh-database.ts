/**
 * A database of its own for a test file that must see the whole database (row counts of every
 * table, "no tenant besides the default"), which the run's shared database cannot promise while
 * other files write to it. Migrated like the shared one; dropped by `drop()`.
 */
import crypto from 'node:crypto';
import { Client } from 'pg';
import pino from 'pino';
import { migrate } from '../../src/db/database';
import { ADMIN_URL } from '../setup/global-setup';

export interface FreshDatabase {
  url: string;
  drop(): Promise<void>;
}

/** Runs `fn` with a client connected to the test cluster's admin database. */
export async function admin<T>(fn: (c: Client) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: ADMIN_URL });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** Creates and migrates a new database (with its default tenant) on the test cluster. */
export async function createFreshDatabase(prefix = 'tenant_service_fresh'): Promise<FreshDatabase> {
  const name = `${prefix}_${Date.now()}_${crypto.randomBytes(3).toString('hex')}`;
  await admin((c) => c.query(`create database ${name}`));
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  await migrate(url.toString(), 'default', pino({ level: 'silent' }));
  return {
    url: url.toString(),
    drop: () => admin((c) => c.query(`drop database if exists ${name} with (force)`)).then(() => undefined),
  };
}
