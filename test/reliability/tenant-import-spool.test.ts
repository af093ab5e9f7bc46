/**
 * A tenant import receives its upload into a private temporary file before it writes a row
 * (docs/operations.md#moving-a-tenant-between-deployments), on the real server process
 * (`node dist/src/server.js`) with a request timeout of five seconds (SERVICE_REQUEST_TIMEOUT_MS,
 * long enough for the ~24 MB upload to arrive on a busy machine; the query timeout is longer
 * than the time the rows wait on the test's lock):
 *
 * - an import whose rows take longer than the request timeout (the test holds a lock on the
 *   tenants table until a slow client, started after the import's upload, has been cut off by
 *   that timeout) still answers 201 on the same request;
 * - a client that sends its body too slowly is still cut off (408), whatever it sends to;
 * - the temporary file is gone after a success, a refused file, a client that goes away, and
 *   (emptied at the next start) after a crash mid-upload; while it exists it is 0600.
 *
 * The file is ~24 MB, more than the loopback socket buffers hold: an import that wrote rows while
 * still receiving would be waiting on the lock with its body unread, and be cut off.
 */
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import knexFactory, { type Knex } from 'knex';
import request from 'supertest';
import { startTestApp, TEST_DATA_DIR, type TestApp } from '../helpers/app';
import { adminToken, closeOwnerConnection, ownerConnection, unique } from '../helpers/factories';
import { createFreshDatabase, type FreshDatabase } from '../helpers/fresh-database';
import { freePort } from '../helpers/pg-cluster';
import { buildOnce, startServerProcess, stopServer, waitUntilReady, type ServerProcess } from '../helpers/server-process';

jest.setTimeout(300_000);

const ADMIN = adminToken();
const SPOOL = path.join(TEST_DATA_DIR, 'import-spool');
const GENERATIONS = 12_000;
/** The upload must arrive within it; the rows then wait on the lock for longer. */
const REQUEST_TIMEOUT_MS = 5_000;

let source: TestApp;
let fresh: FreshDatabase;
let freshOwner: Knex;
let server: ServerProcess | null = null;
let tenantId: string;
let file: string;

function start(port: number, requestTimeoutMs: number): ServerProcess {
  return startServerProcess(port, {
    SERVICE_DATABASE_URL: fresh.url,
    SERVICE_DATA_DIR: TEST_DATA_DIR,
    SERVICE_MULTI_TENANT_MODE: 'true',
    SERVICE_RATE_LIMIT_ENABLED: 'false',
    SERVICE_REQUEST_TIMEOUT_MS: String(requestTimeoutMs),
    SERVICE_DATABASE_QUERY_TIMEOUT_MS: '120000',
  });
}

beforeAll(async () => {
  await buildOnce();
  fresh = await createFreshDatabase('tenant_service_import_spool');
  freshOwner = knexFactory({ client: 'pg', connection: fresh.url, pool: { min: 0, max: 3 } });
  source = await startTestApp({ SERVICE_MULTI_TENANT_MODE: 'true' });
  const slug = unique('spool');
  const created = await request(source.app).post('/api/setup/tenant').set('Authorization', `Bearer ${ADMIN}`).send({ name: 'Spool Co', slug, include_sample_data: true }).expect(201);
  tenantId = created.body.tenant_id as string;
  await ownerConnection().raw(
    `insert into generations (tenant_id, board_id, prompt, media_url, media_type)
     select ?, b.id, repeat('a long prompt ', 140) || g, 'https://media.example.test/' || g || '.png', 'image/png'
       from generate_series(1, ?) g, (select id from boards where tenant_id = ? limit 1) b`,
    [tenantId, GENERATIONS, tenantId],
  );
  const exported = await request(source.app)
    .get(`/api/setup/tenant/${tenantId}/export`)
    .set('Authorization', `Bearer ${ADMIN}`)
    .buffer(true)
    .parse((res, cb) => {
      const parts: Buffer[] = [];
      res.on('data', (c: Buffer) => parts.push(c));
      res.on('end', () => cb(null, Buffer.concat(parts).toString('utf8')));
    })
    .expect(200);
  file = exported.body as string;
  expect(Buffer.byteLength(file)).toBeGreaterThan(20_000_000);
  server = start(await freePort(), REQUEST_TIMEOUT_MS);
  expect(await waitUntilReady(server, 60_000)).toBe(200);
}, 240_000);

afterAll(async () => {
  if (server) await stopServer(server, 'SIGKILL');
  await source?.close();
  await freshOwner?.destroy();
  await fresh?.drop();
  await closeOwnerConnection();
});

const spooled = (): string[] => (fs.existsSync(SPOOL) ? fs.readdirSync(SPOOL) : []);

async function until(what: string, fn: () => boolean | Promise<boolean>, boundMs = 60_000): Promise<void> {
  const deadline = Date.now() + boundMs;
  while (!(await fn())) {
    if (Date.now() > deadline) throw new Error(`gave up waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

async function tenantsOnTarget(): Promise<number> {
  return Number((await freshOwner('tenants').where({ id: tenantId }).count({ n: '*' }))[0]!.n);
}

function postImport(body: string): Promise<Response> {
  return fetch(`${server!.baseUrl}/api/setup/tenants/import`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${ADMIN}`, 'Content-Type': 'application/x-ndjson' },
    body,
  });
}

/**
 * A raw connection that sends a request's headers and the first `sent` bytes of a body of
 * `length` bytes, then nothing more. Resolves `answer` with what the server wrote before it
 * closed the connection.
 */
function stalledUpload(urlPath: string, contentType: string, length: number, sent: string): { socket: net.Socket; answer: Promise<string> } {
  const { port } = new URL(server!.baseUrl);
  const socket = net.connect(Number(port), '127.0.0.1');
  let received = '';
  socket.on('data', (c: Buffer) => (received += c.toString('latin1')));
  const answer = new Promise<string>((resolve) => socket.on('close', () => resolve(received)));
  socket.on('error', () => undefined);
  socket.write(
    `POST ${urlPath} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${ADMIN}\r\nContent-Type: ${contentType}\r\nContent-Length: ${length}\r\n\r\n${sent}`,
  );
  return { socket, answer };
}

it('a refused file (its SHA-256 does not match): 400, nothing written, no file left', async () => {
  const damaged = file.replace('a long prompt a long', 'a long prompt A long');
  expect(damaged).not.toBe(file);
  const r = await postImport(damaged);
  expect(r.status).toBe(400);
  expect(((await r.json()) as { detail: string }).detail).toMatch(/SHA-256/);
  expect(await tenantsOnTarget()).toBe(0);
  expect(spooled()).toEqual([]);
});

it('a client that sends its body too slowly is cut off by the request timeout (408), and its file removed', async () => {
  const { answer } = stalledUpload('/api/setup/tenants/import', 'application/x-ndjson', Buffer.byteLength(file), file.slice(0, 4096));
  expect(await answer).toMatch(/^HTTP\/1\.1 408 /);
  await until('the file to be removed', () => spooled().length === 0);
  expect(await tenantsOnTarget()).toBe(0);
});

it('an import whose rows take longer than the request timeout still answers 201 on the same request; no file left', async () => {
  const locker = await freshOwner.transaction();
  let pending: Promise<Response> | null = null;
  try {
    // New tenants wait for this lock: the import's first insert waits, after its upload has arrived.
    await locker.raw('lock table tenants in share mode');
    pending = postImport(file);
    // Its upload arrives and is checked first (tens of MB: long on a busy machine); an answer
    // before it waits on the lock says why at once instead of at the end of the bound.
    let early: Response | null = null;
    void pending.then((r) => (early = r), () => undefined);
    await until('the import to wait on the lock', async () => {
      if (early) throw new Error(`the import was answered ${(early as Response).status} before it waited on the lock: ${await (early as Response).text()}`);
      const r = await freshOwner.raw<{ rows: unknown[] }>(
        "select 1 from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock' and query ilike 'insert into%tenants%'",
      );
      return r.rows.length > 0;
    }, 240_000);
    // Its upload is a file by now, still there while the rows wait.
    expect(spooled()).toHaveLength(1);
    // A slower client, started after the import's body had arrived, is cut off by the timeout:
    // by then the import's request is older than the timeout too, and is not cut off.
    const slow = stalledUpload('/api/setup/tenant', 'application/json', 100, '{"name":');
    expect(await slow.answer).toMatch(/^HTTP\/1\.1 408 /);
  } finally {
    await locker.commit();
  }
  const r = await pending!;
  // (On failure, the server's error lines say why.)
  expect({ status: r.status, errors: server!.logs.filter((l) => Number(l.level) >= 50) }).toEqual({ status: 201, errors: [] });
  const body = (await r.json()) as { tenant_id: string; counts: Record<string, number> };
  expect(body.tenant_id).toBe(tenantId);
  expect(body.counts.generations).toBeGreaterThanOrEqual(GENERATIONS);
  expect(await tenantsOnTarget()).toBe(1);
  expect(spooled()).toEqual([]);
});

describe('with a request timeout longer than the test (a stalled upload is not cut off meanwhile)', () => {
  beforeAll(async () => {
    await stopServer(server!);
    server = start(await freePort(), 600_000);
    expect(await waitUntilReady(server, 60_000)).toBe(200);
  });

  it('a client that goes away mid-upload: its file is removed', async () => {
    const { socket, answer } = stalledUpload('/api/setup/tenants/import', 'application/x-ndjson', Buffer.byteLength(file), file.slice(0, 1_000_000));
    await until('the upload to be received into a file', () => spooled().length === 1);
    // Private while it exists: only the service's user reads it.
    expect(fs.statSync(path.join(SPOOL, spooled()[0]!)).mode & 0o777).toBe(0o600);
    expect(fs.statSync(SPOOL).mode & 0o777).toBe(0o700);
    socket.destroy();
    await answer;
    await until('the file to be removed', () => spooled().length === 0);
  });

  it('a crash mid-upload: the next start removes the file it left', async () => {
    const { answer } = stalledUpload('/api/setup/tenants/import', 'application/x-ndjson', Buffer.byteLength(file), file.slice(0, 1_000_000));
    await until('the upload to be received into a file', () => spooled().length === 1);
    const left = spooled()[0]!;
    await stopServer(server!, 'SIGKILL');
    await answer;
    expect(spooled()).toEqual([left]);
    server = start(await freePort(), 600_000);
    expect(await waitUntilReady(server, 60_000)).toBe(200);
    expect(spooled()).toEqual([]);
    expect(server.logs.some((l) => l.msg === 'Removed import uploads left by an earlier run' && l.files === 1)).toBe(true);
  });
});
