/**
 * Real PostgreSQL errors through the error catalog: statements that a client's input (or a race
 * with a delete) can cause fail with their real SQLSTATE and constraint name, and
 * `mapDatabaseError` turns each into its 4xx, whether the statement went through a model
 * (Objection wraps the error) or a named query. The constraint table names only constraints
 * that exist.
 */
import crypto from 'node:crypto';
import { CONSTRAINT_ERRORS, nativeDatabaseError } from '../../src/db/constraint-errors';
import { openDatabase } from '../../src/db/database';
import { BoardRow, GenerationRow, TenantRow, UserRow } from '../../src/db/models';
import { fetchKeysetRows } from '../../src/db/queries/keyset-page';
import { withService, withTenant, type Database } from '../../src/db/tenant-scope';
import { mapDatabaseError } from '../../src/db/database-errors';
import { testRuntimeDatabaseUrl } from '../helpers/app';
import { closeOwnerConnection, createTenant, createUser, ownerConnection, unique } from '../helpers/factories';

let db: Database;
let tenantId: string;
beforeAll(async () => {
  db = openDatabase({ url: testRuntimeDatabaseUrl(), poolMax: 2 });
  tenantId = (await createTenant()).id;
});
afterAll(async () => {
  await db.destroy();
  await closeOwnerConnection();
});

/** The catalog's answer to what `run` throws. */
async function mapped(run: () => Promise<unknown>) {
  const err = await run().then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).not.toBeNull();
  const api = mapDatabaseError(err);
  const native = nativeDatabaseError(err) as { code?: string; constraint?: string };
  return api && { status: api.status, error: api.error, detail: api.detail, code: native.code, constraint: native.constraint };
}

it('a taken slug (through the model) is 409 naming it', async () => {
  const { slug } = await createTenant();
  expect(await mapped(() => withService(db, async (trx) => TenantRow.query(trx).insert({ name: 'x', slug })))).toEqual({
    status: 409,
    error: 'Conflict',
    detail: `A tenant with slug '${slug}' already exists.`,
    code: '23505',
    constraint: 'tenants_slug_unique',
  });
});

it('a slug the check refuses is 400', async () => {
  expect(await mapped(() => withService(db, async (trx) => TenantRow.query(trx).insert({ name: 'x', slug: 'Not A Slug' })))).toMatchObject({ status: 400, error: 'Validation error', code: '23514', constraint: 'tenants_slug_check' });
});

it('a status the lifecycle table does not know is 400 naming the statuses', async () => {
  expect(await mapped(() => withService(db, async (trx) => TenantRow.query(trx).insert({ name: 'x', slug: unique('archived'), status: 'archived' as never })))).toMatchObject({
    status: 400,
    error: 'Validation error',
    constraint: 'tenants_status_known',
  });
});

it('a member removed while the request ran (created_by, board_members) is 403', async () => {
  const gone = crypto.randomUUID();
  expect(await mapped(() => withTenant(db, tenantId, async (trx) => BoardRow.query(trx).insert({ tenant_id: tenantId, name: 'b', created_by: gone })))).toMatchObject({
    status: 403,
    error: 'Access denied',
    code: '23503',
    constraint: 'boards_tenant_id_created_by_fkey',
  });
});

it('a board deleted while the request ran is 404', async () => {
  expect(
    await mapped(() => withTenant(db, tenantId, async (trx) => GenerationRow.query(trx).insert({ tenant_id: tenantId, board_id: crypto.randomUUID(), prompt: 'p' }))),
  ).toMatchObject({ status: 404, error: 'Not found', code: '23503', constraint: 'generations_tenant_id_board_id_fkey' });
});

it('a tenant deleted while the request ran is 404 Tenant not found', async () => {
  const deleted = crypto.randomUUID();
  expect(
    await mapped(() => withTenant(db, deleted, async (trx) => UserRow.query(trx).insert({ tenant_id: deleted, issuer: 'i', subject: unique('s'), role: 'member' }))),
  ).toMatchObject({ status: 404, error: 'Tenant not found', code: '23503', constraint: 'users_tenant_id_fkey' });
});

it('a subject too long for the identity index (54000) is 400', async () => {
  const subject = crypto.randomBytes(6000).toString('base64');
  expect(
    await mapped(() => withTenant(db, tenantId, async (trx) => UserRow.query(trx).insert({ tenant_id: tenantId, issuer: 'i', subject, role: 'member' }))),
  ).toMatchObject({ status: 400, error: 'Validation error', code: '54000' });
});

it('a name longer than its column (22001) is 400', async () => {
  expect(await mapped(() => withService(db, async (trx) => TenantRow.query(trx).insert({ name: 'n'.repeat(300), slug: unique('long') })))).toMatchObject({
    status: 400,
    error: 'Validation error',
    code: '22001',
  });
});

it('a cursor date PostgreSQL refuses (22008) and a non-uuid id (22P02) are 400', async () => {
  await createUser(tenantId);
  expect(
    await mapped(() =>
      withTenant(db, tenantId, (trx) => fetchKeysetRows(UserRow.query(trx).where({ tenant_id: tenantId }), 2, { createdAt: '2024-02-30T00:00:00.000000Z', id: crypto.randomUUID() })),
    ),
  ).toMatchObject({ status: 400, code: '22008' });
  expect(await mapped(() => withTenant(db, tenantId, async (trx) => UserRow.query(trx).findById([tenantId, 'not-a-uuid'])))).toMatchObject({ status: 400, code: '22P02' });
});

it('every constraint named in the catalog exists in the schema', async () => {
  const names = new Set(
    ((await ownerConnection().raw<{ rows: Array<{ name: string }> }>(
      `select conname as name from pg_constraint where connamespace = 'public'::regnamespace
       union select indexname from pg_indexes where schemaname = 'public'`,
    )).rows).map((r) => r.name),
  );
  expect(Object.keys(CONSTRAINT_ERRORS).filter((n) => !names.has(n))).toEqual([]);
});
