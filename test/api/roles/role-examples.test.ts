/**
 * The contract's role examples work on a fresh instance (docs/roles.md): sent as they are to a
 * freshly migrated database, each role operation's request example is accepted — it names only
 * permissions a fresh catalogue holds.
 */
import knexFactory from 'knex';
import request from 'supertest';
import { loadOpenApiDocument } from '../../../src/openapi-document';
import { startTestApp, type TestApp } from '../../helpers/app';
import { createFreshDatabase, type FreshDatabase } from '../../helpers/fresh-database';
import { adminToken, closeOwnerConnection, tokenFor, unique } from '../../helpers/factories';
import { LOCAL_ISSUER } from '../../../src/auth/local-keys';

let fresh: FreshDatabase;
let app: TestApp;

beforeAll(async () => {
  fresh = await createFreshDatabase('tenant_service_role_examples');
  app = await startTestApp({ SERVICE_DATABASE_URL: fresh.url });
}, 60_000);
afterAll(async () => {
  await app?.close();
  await fresh?.drop();
  await closeOwnerConnection();
});

type Op = { operationId: string; requestBody: { content: { 'application/json': { example: Record<string, unknown> } } } };
const paths = loadOpenApiDocument().paths as Record<string, Record<string, Op>>;
function example(operationId: string): { path: string; body: Record<string, unknown> } {
  for (const [path, item] of Object.entries(paths)) {
    for (const op of Object.values(item)) if (op?.operationId === operationId) return { path, body: op.requestBody.content['application/json'].example };
  }
  throw new Error(`no operation ${operationId}`);
}

it('the platform role examples: created (201) and replaced (200) as they are', async () => {
  const auth = `Bearer ${adminToken()}`;
  const create = example('createPlatformRole');
  const made = await request(app.app).post(create.path).set('Authorization', auth).send(create.body);
  expect([made.status, made.body.detail]).toEqual([201, undefined]);
  const update = example('updatePlatformRole');
  const changed = await request(app.app).put(update.path.replace('{role_key}', String(create.body.key))).set('Authorization', auth).send(update.body);
  expect([changed.status, changed.body.detail]).toEqual([200, undefined]);
});

it("the tenant role examples: created (201) and replaced (200) as they are, by the default tenant's admin", async () => {
  const owner = knexFactory({ client: 'pg', connection: fresh.url, pool: { min: 0, max: 1 } });
  const subject = unique('admin');
  try {
    const { id } = (await owner('tenants').where({ is_default: true }).first('id')) as { id: string };
    await owner('users').insert({ tenant_id: id, subject, email: `${subject}@example.test`, issuer: LOCAL_ISSUER, role: 'admin' });
  } finally {
    await owner.destroy();
  }
  const auth = `Bearer ${tokenFor({ sub: subject, email: `${subject}@example.test` })}`;
  const create = example('createTenantRole');
  const made = await request(app.app).post(create.path).set('Authorization', auth).send(create.body);
  expect([made.status, made.body.detail]).toEqual([201, undefined]);
  const update = example('updateTenantRole');
  const changed = await request(app.app).put(update.path.replace('{role_key}', String(create.body.key))).set('Authorization', auth).send(update.body);
  expect([changed.status, changed.body.detail]).toEqual([200, undefined]);
});
