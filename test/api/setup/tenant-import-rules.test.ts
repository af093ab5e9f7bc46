/**
 * Tenant import keeps every role rule the API keeps (docs/operations.md#moving-a-tenant-between-deployments):
 * a tenant role keyed like a platform role, a role held that exists nowhere, and permissions the
 * importing deployment's catalogue lacks are refused with one 400 naming all of them, and nothing
 * is written; once the operator creates the permissions, the same file imports.
 */
import crypto from 'node:crypto';
import knexFactory, { type Knex } from 'knex';
import request from 'supertest';
import { TENANT_DATA_TABLES } from '../../../src/db/schema';
import { startTestApp, type TestApp } from '../../helpers/app';
import { createFreshDatabase, type FreshDatabase } from '../../helpers/fresh-database';
import { adminToken, closeOwnerConnection, createUser, tokenFor, unique } from '../../helpers/factories';

let source: TestApp;
let target: TestApp;
let fresh: FreshDatabase;
let freshOwner: Knex;
const ADMIN = adminToken();
const bearer = (token: string) => `Bearer ${token}`;
const [KEPT, LACKING_A, LACKING_B] = [unique('kept'), unique('lack-a'), unique('lack-b')].map((p) => `${p}:read`);

type Line = { type: string; table?: string; row?: Record<string, unknown>; counts?: Record<string, number>; sha256?: string };
const lines = (file: string): Line[] => file.split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as Line);

/** A file rebuilt from lines with a correct end line (counts and hash). */
function rebuild(all: Line[]): string {
  const body = all.filter((l) => l.type !== 'end').map((l) => `${JSON.stringify(l)}\n`).join('');
  const counts = Object.fromEntries(TENANT_DATA_TABLES.map((t) => [t.table, all.filter((l) => l.table === t.table).length]));
  return `${body}${JSON.stringify({ type: 'end', counts, sha256: crypto.createHash('sha256').update(body).digest('hex') })}\n`;
}

const importInto = (app: TestApp, body: string) =>
  request(app.app).post('/api/setup/tenants/import').set('Authorization', bearer(ADMIN)).set('Content-Type', 'application/x-ndjson').send(body);

const createPermission = async (app: TestApp, key: string) => {
  await request(app.app).post('/api/setup/permissions').set('Authorization', bearer(ADMIN)).send({ key }).expect(201);
};

async function nothingWritten(tenantId: string): Promise<void> {
  for (const table of ['tenants', 'users', 'tenant_roles', 'tenant_role_permissions', 'events']) {
    const column = table === 'tenants' ? 'id' : 'tenant_id';
    expect({ table, rows: await freshOwner(table).where({ [column]: tenantId }).count('* as n') }).toEqual({ table, rows: [{ n: '0' }] });
  }
}

let tenantId: string;
let file: string;

beforeAll(async () => {
  fresh = await createFreshDatabase('tenant_service_import_rules');
  freshOwner = knexFactory({ client: 'pg', connection: fresh.url, pool: { min: 0, max: 2 } });
  source = await startTestApp({ SERVICE_MULTI_TENANT_MODE: 'true' });
  target = await startTestApp({ SERVICE_MULTI_TENANT_MODE: 'true', SERVICE_DATABASE_URL: fresh.url });
  // The source: a tenant role built from three permissions, held by a member.
  for (const key of [KEPT, LACKING_A, LACKING_B]) await createPermission(source, key);
  await createPermission(target, KEPT);
  const slug = unique('rules');
  const created = await request(source.app).post('/api/setup/tenant').set('Authorization', bearer(ADMIN)).send({ name: `Rules ${slug}`, slug }).expect(201);
  tenantId = created.body.tenant_id as string;
  const admin = await createUser(tenantId, { role: 'admin' });
  const token = tokenFor({ sub: admin.subject, email: admin.email });
  await request(source.app).post('/api/tenant/roles').set('Authorization', bearer(token)).set('X-Tenant', slug)
    .send({ key: 'mover', name: 'Mover', permissions: [KEPT, LACKING_A, LACKING_B] }).expect(201);
  await createUser(tenantId, { role: 'mover' });
  await request(source.app).post('/api/tenant/invitations').set('Authorization', bearer(token)).set('X-Tenant', slug).send({ email: `${unique('i')}@example.test` }).expect(201);
  const exported = await request(source.app).get(`/api/setup/tenant/${tenantId}/export`).set('Authorization', bearer(ADMIN))
    .buffer(true).parse((res, cb) => {
      let data = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (data += c));
      res.on('end', () => cb(null, data));
    }).expect(200);
  file = exported.body as string;
}, 120_000);

afterAll(async () => {
  await Promise.all([source, target].map((a) => a?.close()));
  await freshOwner?.destroy();
  await fresh?.drop();
  await closeOwnerConnection();
});

it('permissions missing from the catalogue: 400 naming every one of them and saying to create them first; nothing written', async () => {
  const r = await importInto(target, file).expect(400);
  expect(r.body.error).toBe('Bad request');
  expect(r.body.detail).toContain(`'${LACKING_A}'`);
  expect(r.body.detail).toContain(`'${LACKING_B}'`);
  expect(r.body.detail).not.toContain(`'${KEPT}'`);
  expect(r.body.detail).toMatch(/create these permissions first/);
  await nothingWritten(tenantId);
});

it("a tenant role keyed like a platform role, roles held that exist nowhere, and missing permissions: one 400 naming all; nothing written", async () => {
  const all = lines(file);
  const mover = all.find((l) => l.table === 'tenant_roles' && l.row!.key === 'mover')!;
  const at = all.indexOf(mover);
  const tampered = [
    ...all.slice(0, at),
    // A tenant role keyed `admin`: its permissions would reach every admin of the tenant.
    { ...mover, row: { ...mover.row, key: 'admin', name: 'Not the platform admin' } },
    ...all.slice(at),
  ].map((l) => {
    if (l.table === 'users' && l.row!.role === 'mover') return { ...l, row: { ...l.row, role: 'ghost' } };
    // An invitation holding a role that exists nowhere, too.
    if (l.table === 'invitations') return { ...l, row: { ...l.row, role: 'phantom' } };
    return l;
  });
  const r = await importInto(target, rebuild(tampered)).expect(400);
  expect(r.body.error).toBe('Bad request');
  for (const named of ["'admin'", "'ghost'", "'phantom'", `'${LACKING_A}'`, `'${LACKING_B}'`]) expect(r.body.detail).toContain(named);
  expect(r.body.detail).toMatch(/platform role/);
  await nothingWritten(tenantId);
});

it('once the operator creates the permissions, the same file imports (201) with its role whole', async () => {
  await createPermission(target, LACKING_A);
  await createPermission(target, LACKING_B);
  await importInto(target, file).expect(201);
  const held = await freshOwner('tenant_role_permissions').where({ tenant_id: tenantId, role_key: 'mover' }).orderBy('permission_key').pluck('permission_key');
  expect(held).toEqual([KEPT, LACKING_A, LACKING_B].sort());
});
