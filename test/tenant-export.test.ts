/**
 * Tenant export and import (docs/operations.md#moving-a-tenant-between-deployments): the
 * table list matches the database, an export round-trips through an import on a second
 * database to identical rows, no secret leaves, and a tampered, truncated, reordered or
 * foreign file — or one too large — writes nothing.
 */
import crypto from 'node:crypto';
import knexFactory, { type Knex } from 'knex';
import request from 'supertest';
import { NOT_TENANT_DATA, TENANT_DATA_TABLES } from '../src/db/schema';
import { startTestApp, type TestApp } from './helpers/app';
import { createFreshDatabase, type FreshDatabase } from './helpers/fresh-database';
import { adminToken, closeOwnerConnection, createUser, ownerConnection, tokenFor, unique } from './factories';

let source: TestApp;
let target: TestApp;
let small: TestApp;
let fresh: FreshDatabase;
/** The second database as its owner (row-level security does not hide rows from it). */
let freshOwner: Knex;
const ADMIN = adminToken();
const MOVE_PERMISSION = 'moves:read';
const bearer = (token: string) => `Bearer ${token}`;

beforeAll(async () => {
  fresh = await createFreshDatabase('tenant_service_import');
  freshOwner = knexFactory({ client: 'pg', connection: fresh.url, pool: { min: 0, max: 2 } });
  source = await startTestApp({ SERVICE_MULTI_TENANT_MODE: 'true' });
  target = await startTestApp({ SERVICE_MULTI_TENANT_MODE: 'true', SERVICE_DATABASE_URL: fresh.url });
  small = await startTestApp({ SERVICE_MULTI_TENANT_MODE: 'true', SERVICE_DATABASE_URL: fresh.url, SERVICE_IMPORT_MAX_BYTES: '2000' });
}, 120_000);
afterAll(async () => {
  await Promise.all([source, target, small].map((a) => a?.close()));
  await freshOwner?.destroy();
  await fresh?.drop();
  await closeOwnerConnection();
});

/** The raw text of a response, whatever its type. */
function text(r: request.Test): request.Test {
  return r.buffer(true).parse((res, cb) => {
    let data = '';
    res.setEncoding('utf8');
    res.on('data', (c: string) => (data += c));
    res.on('end', () => cb(null, data));
  });
}

async function exportOf(app: TestApp, tenantId: string): Promise<string> {
  const r = await text(request(app.app).get(`/api/setup/tenant/${tenantId}/export`).set('Authorization', bearer(ADMIN))).expect(200);
  expect(r.headers['content-type']).toMatch(/^application\/x-ndjson/);
  return r.body as string;
}

function importInto(app: TestApp, body: string) {
  return request(app.app).post('/api/setup/tenants/import').set('Authorization', bearer(ADMIN)).set('Content-Type', 'application/x-ndjson').send(body);
}

type Line = { type: string; table?: string; row?: Record<string, unknown>; counts?: Record<string, number>; sha256?: string };
const lines = (file: string): Line[] =>
  file
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Line);

/** A file rebuilt from lines with a correct end line (counts and hash), to test what only the content gets wrong. */
function rebuild(all: Line[]): string {
  const body = all.filter((l) => l.type !== 'end').map((l) => `${JSON.stringify(l)}\n`).join('');
  const counts = Object.fromEntries(TENANT_DATA_TABLES.map((t) => [t.table, all.filter((l) => l.table === t.table).length]));
  return `${body}${JSON.stringify({ type: 'end', counts, sha256: crypto.createHash('sha256').update(body).digest('hex') })}\n`;
}

/** A tenant with rows in every table an export carries. */
async function richTenant() {
  const slug = unique('move');
  const created = await request(source.app)
    .post('/api/setup/tenant')
    .set('Authorization', bearer(ADMIN))
    .send({ name: `Move ${slug}`, slug, include_sample_data: true, settings: { billing_plan: 'pro' }, identity_links: [{ issuer: 'https://idp.example.test', organization_id: unique('org') }] })
    .expect(201);
  const id = created.body.tenant_id as string;
  const admin = await createUser(id, { role: 'admin' });
  const token = tokenFor({ sub: admin.subject, email: admin.email });
  await request(source.app).post('/api/boards').set('Authorization', bearer(token)).set('X-Tenant', slug).send({ name: 'Roadmap' }).expect(201);
  await request(source.app).post('/api/tenant/invitations').set('Authorization', bearer(token)).set('X-Tenant', slug).send({ email: `${unique('i')}@example.test` }).expect(201);
  await ownerConnection().raw('insert into board_members (tenant_id, board_id, user_id) select tenant_id, id, ? from boards where tenant_id = ? on conflict do nothing', [admin.id, id]);
  // A member removed by the admin: the removal mark moves with the tenant.
  const leaver = await createUser(id, { role: 'member' });
  await request(source.app).delete(`/api/tenant/members/${leaver.id}`).set('Authorization', bearer(token)).set('X-Tenant', slug).expect(204);
  // A role of the tenant's own, built from a catalogue permission that the importing deployment has too.
  for (const app of [source, target]) {
    const made = await request(app.app).post('/api/setup/permissions').set('Authorization', bearer(ADMIN)).send({ key: MOVE_PERMISSION });
    expect([201, 409]).toContain(made.status);
  }
  await request(source.app).post('/api/tenant/roles').set('Authorization', bearer(token)).set('X-Tenant', slug).send({ key: 'mover', name: 'Mover', permissions: [MOVE_PERMISSION] }).expect(201);
  // Directory sync: its settings, a directory user bound to the admin, a group holding them.
  await request(source.app).put('/api/tenant/scim').set('Authorization', bearer(token)).set('X-Tenant', slug).send({ group_roles: [{ group: 'Movers', role: 'mover' }], external_id_claim: 'oid' }).expect(200);
  const [du] = await ownerConnection()('directory_users')
    .insert({ tenant_id: id, user_name: admin.email ?? 'mover@example.test', user_name_key: (admin.email ?? 'mover@example.test').toLowerCase(), user_id: admin.id, emails: JSON.stringify([{ value: admin.email, primary: true }]) })
    .returning('id');
  const [dg] = await ownerConnection()('directory_groups').insert({ tenant_id: id, display_name: 'Movers' }).returning('id');
  await ownerConnection()('directory_group_members').insert({ tenant_id: id, group_id: dg.id, member_id: du.id });
  return { id, slug };
}

async function rowsOf(tenantId: string, db: 'source' | 'target'): Promise<number> {
  const knex = db === 'source' ? ownerConnection() : freshOwner;
  const r = await knex.raw<{ rows: Array<{ n: string }> }>(
    `select (select count(*) from tenants where id = :id) + (select count(*) from identity_links where tenant_id = :id) as n`,
    { id: tenantId },
  );
  return Number(r.rows[0]!.n);
}

it('the table list is every table with a tenant_id column, each either exported or named as not tenant data', async () => {
  const r = await ownerConnection().raw<{ rows: Array<{ table_name: string }> }>(
    "select table_name from information_schema.columns where table_schema = 'public' and column_name = 'tenant_id' order by table_name",
  );
  const inDatabase = r.rows.map((x) => x.table_name).sort();
  const listed = [...TENANT_DATA_TABLES.filter((t) => t.tenantColumn === 'tenant_id').map((t) => t.table), ...Object.keys(NOT_TENANT_DATA)].sort();
  expect(listed).toEqual(inDatabase);
});

describe('round trip', () => {
  let tenant: { id: string; slug: string };
  let file: string;
  beforeAll(async () => {
    tenant = await richTenant();
    file = await exportOf(source, tenant.id);
  });

  it('a manifest, one line per row of every table, and an end line whose counts and SHA-256 hold', () => {
    const all = lines(file);
    expect(all[0]).toMatchObject({ type: 'manifest', format: 'tenant-service.export/1', tenant_id: tenant.id, slug: tenant.slug, tables: TENANT_DATA_TABLES.map((t) => t.table) });
    const end = all.at(-1)!;
    expect(end.type).toBe('end');
    for (const t of TENANT_DATA_TABLES) {
      expect({ table: t.table, n: end.counts![t.table] }).toEqual({ table: t.table, n: all.filter((l) => l.table === t.table).length });
      if (t.table !== 'board_members') expect({ table: t.table, some: end.counts![t.table]! > 0 }).toEqual({ table: t.table, some: true });
    }
    const before = file.slice(0, file.lastIndexOf('{"type":"end"'));
    expect(end.sha256).toBe(crypto.createHash('sha256').update(before).digest('hex'));
    expect(all.filter((l) => l.type === 'row' && l.table === 'events').map((l) => l.row!.action)).toContain('tenant.exported');
  });

  it('no secret leaves: no invitation token hash, no signing key, no webhook secret', async () => {
    const hashes = (await ownerConnection()('invitations').where({ tenant_id: tenant.id }).select('token_hash')).map((r: { token_hash: string }) => r.token_hash);
    expect(hashes.length).toBeGreaterThan(0);
    for (const h of hashes) expect(file).not.toContain(h);
    expect(file).not.toContain('token_hash');
    expect(file).not.toContain('private_key');
    expect(file).not.toContain('whsec_');
    // The deployment's choice of its default tenant is not the tenant's data.
    expect(Object.keys(lines(file).find((l) => l.table === 'tenants')!.row!)).not.toContain('is_default');
  });

  it('imports on a second database with the same ids (201), and its export gives the same rows', async () => {
    const r = await importInto(target, file).expect(201);
    expect(r.body).toMatchObject({ tenant_id: tenant.id, slug: tenant.slug });
    expect(r.body.counts).toEqual(lines(file).at(-1)!.counts);
    const again = lines(await exportOf(target, tenant.id)).filter((l) => l.type === 'row');
    const original = lines(file).filter((l) => l.type === 'row');
    const key = (l: Line) => JSON.stringify([l.table, l.row]);
    const originalKeys = new Set(original.map(key));
    // The second deployment adds its own two events: the import and this export.
    const added = again.filter((l) => !originalKeys.has(key(l)));
    expect(added.map((l) => [l.table, l.row!.action]).sort()).toEqual([
      ['events', 'tenant.exported'],
      ['events', 'tenant.imported'],
    ]);
    expect(again.filter((l) => originalKeys.has(key(l))).map(key)).toEqual(original.map(key));
  });

  it('the imported tenant works: its members enter it; a pending invitation must be resent', async () => {
    const admin = (await freshOwner('users').where({ tenant_id: tenant.id, role: 'admin' }).first()) as { subject: string; email: string } | undefined;
    const token = tokenFor({ sub: admin!.subject, email: admin!.email });
    const boards = await request(target.app).get('/api/boards').set('Authorization', bearer(token)).set('X-Tenant', tenant.slug).expect(200);
    expect(boards.body.boards.map((b: { name: string }) => b.name)).toContain('Roadmap');
  });

  it('importing it again is 409 (id or slug present), and writes nothing', async () => {
    const before = await rowsOf(tenant.id, 'source');
    const r = await importInto(source, file).expect(409);
    expect(r.body.error).toBe('Conflict');
    expect(await rowsOf(tenant.id, 'source')).toBe(before);
    // Same slug, another id.
    const otherId = crypto.randomUUID();
    const renamed = lines(file).map((l) => (l.type === 'manifest' ? { ...l, tenant_id: otherId } : l.row ? { ...l, row: { ...l.row, [l.table === 'tenants' ? 'id' : 'tenant_id']: otherId } } : l));
    expect((await importInto(source, rebuild(renamed)).expect(409)).body.detail).toContain(tenant.slug);
    expect(await rowsOf(otherId, 'source')).toBe(0);
  });
});

describe('a faulty file writes nothing (400 naming the line)', () => {
  let tenant: { id: string; slug: string };
  let file: string;
  beforeAll(async () => {
    tenant = await richTenant();
    file = await exportOf(source, tenant.id);
  });
  const split = () => file.split('\n').filter((l) => l !== '');

  const cases: Array<[string, () => string, RegExp]> = [
    ['a changed value', () => file.replace('"Roadmap"', '"Roadmaq"'), /SHA-256/],
    ['the end line missing', () => `${split().slice(0, -1).join('\n')}\n`, /no end line/],
    ['cut in the middle of a line', () => file.slice(0, Math.floor(file.length / 2)), /cut short/],
    ['two rows swapped', () => {
      const l = split();
      const i = l.findIndex((x) => x.includes('"table":"generations"'));
      [l[i], l[i + 1]] = [l[i + 1]!, l[i]!];
      return `${l.join('\n')}\n`;
    }, /SHA-256/],
    ['a count changed', () => {
      const l = split();
      const end = JSON.parse(l.at(-1)!) as Line;
      end.counts!.boards = end.counts!.boards! + 1;
      return `${[...l.slice(0, -1), JSON.stringify(end)].join('\n')}\n`;
    }, /counts/],
    ['not JSON', () => file.replace('{"type":"row"', '{"type":row"'), /not valid JSON/],
    ['an unknown format', () => file.replace('tenant-service.export/1', 'tenant-service.export/9'), /unknown format/],
    ["a row of another tenant (hash recomputed)", () => rebuild(lines(file).map((l) => (l.table === 'boards' ? { ...l, row: { ...l.row, tenant_id: crypto.randomUUID() } } : l))), /tenant_id/],
    ['a row of an unknown table (hash recomputed)', () => rebuild(lines(file).map((l) => (l.table === 'boards' ? { ...l, table: 'tenant_token_keys' } : l))), /unknown table/],
    ['a value the database refuses (hash recomputed)', () => rebuild(lines(file).map((l) => (l.table === 'boards' ? { ...l, row: { ...l.row, created_at: 'not a time' } } : l))), /boards row is refused/],
  ];

  it.each(cases)('%s', async (_name, make, detail) => {
    const r = await importInto(target, make()).expect(400);
    expect(r.body.error).toBe('Bad request');
    expect(r.body.detail).toMatch(/^(Line \d+|The file has no end line)/);
    expect(r.body.detail).toMatch(detail);
    expect(await rowsOf(tenant.id, 'target')).toBe(0);
    expect(await freshOwner('events').where({ tenant_id: tenant.id }).count('* as n')).toEqual([{ n: '0' }]);
  });

  it('larger than SERVICE_IMPORT_MAX_BYTES: 413, nothing written; another media type: 415', async () => {
    expect((await importInto(small, file).expect(413)).body.error).toBe('Payload too large');
    expect(await rowsOf(tenant.id, 'target')).toBe(0);
    await request(target.app).post('/api/setup/tenants/import').set('Authorization', bearer(ADMIN)).set('Content-Type', 'application/json').send({ file }).expect(415);
  });
});

it('export of an unknown tenant: 404', async () => {
  await request(source.app).get(`/api/setup/tenant/${crypto.randomUUID()}/export`).set('Authorization', bearer(ADMIN)).expect(404);
});
