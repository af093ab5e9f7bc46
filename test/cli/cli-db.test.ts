/**
 * `tenantctl db url` (docs/operations.md "The embedded database"): the built binary prints the
 * running embedded PostgreSQL's URL, read from the data dir, and a client connects with it to the
 * service's database (PostgreSQL 17); a data dir whose database is not running, or that has none,
 * is a clear error (exit 2), never a URL.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import pino from 'pino';
import { startEmbeddedPostgres, type EmbeddedDatabase } from '../../src/embedded-postgres/start';
import { CLI, ROOT, runProcess } from '../helpers/cli';
import { buildOnce } from '../helpers/server-process';

jest.setTimeout(180_000);

let dataDir: string;
let embedded: EmbeddedDatabase | null = null;

const tenantctl = (args: string[], dir: string) =>
  runProcess(process.execPath, [CLI, ...args], { cwd: ROOT, env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: os.tmpdir(), SERVICE_DATA_DIR: dir } });

beforeAll(async () => {
  await buildOnce();
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tenant-service-db-url-'));
  embedded = await startEmbeddedPostgres(dataDir, pino({ level: 'silent' }));
});
afterAll(async () => {
  await embedded?.stop();
  if (dataDir) {
    // As root the cluster lives where the postgres user can enter, linked from <data dir>/pg.
    const link = path.join(dataDir, 'pg');
    if (fs.lstatSync(link, { throwIfNoEntry: false })?.isSymbolicLink()) fs.rmSync(path.dirname(fs.readlinkSync(link)), { recursive: true, force: true });
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
});

it('prints the URL of the running embedded PostgreSQL; a client connects with it to the service database', async () => {
  const r = await tenantctl(['db', 'url'], dataDir);
  expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' });
  const url = r.stdout.trim();
  expect(url).toBe(embedded!.url);
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    const row = (await client.query<{ db: string; version: string }>('select current_database() as db, current_setting(\'server_version_num\') as version')).rows[0]!;
    expect(row.db).toBe('tenant_service');
    expect(Math.floor(Number(row.version) / 10000)).toBe(17);
  } finally {
    await client.end();
  }
  const json = JSON.parse((await tenantctl(['db', 'url', '--format', 'json'], dataDir)).stdout) as { url: string; port: number };
  expect(json).toMatchObject({ url, port: Number(new URL(url).port) });
});

it('a data dir without an embedded database, or whose database is stopped: exit 2 saying so, no URL', async () => {
  const empty = fs.mkdtempSync(path.join(os.tmpdir(), 'tenant-service-no-db-'));
  try {
    const none = await tenantctl(['db', 'url'], empty);
    expect({ code: none.code, stdout: none.stdout }).toEqual({ code: 2, stdout: '' });
    expect(none.stderr).toMatch(/No embedded PostgreSQL in .+ \(no pg-password there\)/);
  } finally {
    fs.rmSync(empty, { recursive: true, force: true });
  }
  await embedded!.stop();
  embedded = null;
  const stopped = await tenantctl(['db', 'url'], dataDir);
  expect({ code: stopped.code, stdout: stopped.stdout }).toEqual({ code: 2, stdout: '' });
  expect(stopped.stderr).toMatch(/is not running/);
});
