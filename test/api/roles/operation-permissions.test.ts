/**
 * Every tenant operation's `x-permission` is enforced (docs/roles.md#system-permissions), proved
 * from the generated operation table (src/handlers/operations.gen.ts), not from a list written
 * here: for each operation that names a permission, a member whose role holds every system
 * permission but that one is refused 403 `Access denied` naming it, and a member whose role holds
 * only that one passes the access stage (whatever the handler then answers). A valid request is
 * built from the contract (path parameters by their schema, a body the schema accepts), so the
 * refusal is the access stage's and not the validator's.
 */
import request from 'supertest';
import fc from 'fast-check';
import { OPERATIONS } from '../../../src/handlers/operations.gen';
import { readContractOperations, type ContractOperation } from '../../../src/http/contract';
import { loadOpenApiDocument } from '../../../src/openapi-document';
import { SYSTEM_PERMISSIONS } from '../../../src/context/permissions';
import { startTestApp, type TestApp } from '../../helpers/app';
import { adminToken, closeOwnerConnection, createTenant, createUser, tokenFor, unique, type TenantFixture, type UserFixture } from '../../helpers/factories';
import { schemaOf, validBody, type Schema } from '../../helpers/schema-arbitrary';

let t: TestApp;
let tenant: TenantFixture;

const contract = new Map<string, ContractOperation>(readContractOperations().map((o) => [o.operationId, o]));
interface Parameter {
  $ref?: string;
  in: string;
  name: string;
  schema?: Schema;
}
const doc = loadOpenApiDocument() as {
  paths: Record<string, Record<string, { parameters?: Parameter[]; requestBody?: { content: Record<string, { schema: Schema }> } }> & { parameters?: Parameter[] }>;
  components: { parameters?: Record<string, Parameter> };
};
const parameter = (p: Parameter): Parameter => (p.$ref ? doc.components.parameters![p.$ref.replace('#/components/parameters/', '')]! : p);

/** Every operation of the generated table that names a permission, with its contract entry. */
const guarded = (Object.entries(OPERATIONS) as Array<[string, { access: string; permission: string | null }]>)
  .filter(([, o]) => o.permission !== null)
  .map(([id, o]) => ({ id, permission: o.permission!, op: contract.get(id)! }));

beforeAll(async () => {
  t = await startTestApp({ SERVICE_MULTI_TENANT_MODE: 'true' });
  tenant = await createTenant();
}, 120_000);
afterAll(async () => {
  await t?.close();
  await closeOwnerConnection();
});

/** A value the parameter's schema accepts. */
function paramValue(s: Schema | undefined): string {
  if (s?.format === 'uuid') return '00000000-0000-4000-8000-000000000000';
  return 'no-such-thing';
}

/** A valid request for the operation: path parameters filled, a body its schema accepts. */
function requestFor(op: ContractOperation, token: string) {
  const item = doc.paths[op.path]!;
  const spec = item[op.method.toLowerCase()]!;
  let url = op.path;
  for (const p of [...(item.parameters ?? []), ...(spec.parameters ?? [])].map(parameter)) if (p.in === 'path') url = url.replace(`{${p.name}}`, paramValue(p.schema));
  const r = request(t.app)[op.method.toLowerCase() as 'get' | 'post' | 'put' | 'patch' | 'delete'](url).set('Authorization', `Bearer ${token}`).set('X-Tenant', tenant.slug);
  const content = spec.requestBody?.content['application/json'];
  if (!content) return r;
  const schema = content.schema.$ref ? schemaOf(content.schema.$ref.replace('#/components/schemas/', '')) : content.schema;
  const [body] = fc.sample(validBody(schema, () => unique('v')), { numRuns: 1, seed: 25 });
  return r.send(body as object);
}

/** The tenant role holding exactly each set of permissions, made once (a tenant holds a bounded number of roles). */
const roleFor = new Map<string, string>();

/** A tenant role holding exactly `permissions`, and a new member holding it. */
async function memberWith(permissions: readonly string[]): Promise<UserFixture> {
  const set = [...permissions].sort().join(' ');
  let key = roleFor.get(set);
  if (key === undefined) {
    key = unique('role').toLowerCase().replace(/[^a-z0-9-]/g, '-');
    await request(t.app).post('/api/tenant/roles').set('Authorization', `Bearer ${adminToken()}`).set('X-Tenant', tenant.slug).send({ key, name: key, permissions }).expect(201);
    roleFor.set(set, key);
  }
  return createUser(tenant.id, { role: key });
}

const accessDetail = (g: (typeof guarded)[number], role: string) =>
  `Role '${role}' in tenant '${tenant.slug}' does not hold permission '${g.permission}', which ${g.op.method} ${g.op.path} needs.`;

describe('every x-permission of the generated operation table is enforced', () => {
  it('the table names a permission for every tenantAdmin operation, and each is a system permission', () => {
    for (const [id, o] of Object.entries(OPERATIONS) as Array<[string, { access: string; permission: string | null }]>) {
      if (o.access === 'tenantAdmin') expect({ id, permission: o.permission }).toEqual({ id, permission: expect.any(String) });
      if (o.permission !== null) expect(SYSTEM_PERMISSIONS).toContain(o.permission);
      expect(contract.get(id)?.permission ?? null).toBe(o.permission);
    }
    expect(guarded.length).toBeGreaterThan(0);
  });

  it.each(guarded.map((g) => [g.id, g.permission, g] as const))('%s (%s): refused without it, past the access stage with it', async (_id, permission, g) => {
    const lacking = await memberWith(SYSTEM_PERMISSIONS.filter((p) => p !== permission));
    const refused = await requestFor(g.op, tokenFor({ sub: lacking.subject, email: lacking.email }));
    expect({ status: refused.status, body: refused.body }).toMatchObject({ status: 403, body: { error: 'Access denied', detail: accessDetail(g, lacking.role) } });

    const holding = await memberWith([permission]);
    const passed = await requestFor(g.op, tokenFor({ sub: holding.subject, email: holding.email }));
    expect([401, 500]).not.toContain(passed.status);
    expect(passed.body?.detail ?? '').not.toBe(accessDetail(g, holding.role));
  });
});
