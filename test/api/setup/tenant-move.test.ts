/**
 * Moving a tenant says what does not move (docs/operations.md#moving-a-tenant-between-deployments):
 * the import's answer lists it in `not_moved`, and what it says holds: the directory's users
 * arrive, its SCIM token does not (the tenant is not directory-managed until a token is minted).
 */
import request from 'supertest';
import { startTestApp, type TestApp } from '../../helpers/app';
import { adminToken, closeOwnerConnection, createUser, tokenFor, unique } from '../../helpers/factories';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ SERVICE_MULTI_TENANT_MODE: 'true' });
});
afterAll(async () => {
  await t.close();
  await closeOwnerConnection();
});

const platform = () => `Bearer ${adminToken()}`;

it("an import's answer lists what did not move and what to do about each; the directory moved without its token", async () => {
  const slug = unique('moving');
  const created = await request(t.app).post('/api/setup/tenant').set('Authorization', platform()).send({ name: slug, slug }).expect(201);
  const id = created.body.tenant_id as string;
  const admin = await createUser(id, { role: 'admin' });
  const asAdmin = `Bearer ${tokenFor({ sub: admin.subject, claims: { tenant: slug } })}`;
  const made = await request(t.app).post('/api/tenant/scim/tokens').set('Authorization', asAdmin).send({ description: 'Okta' }).expect(201);
  const userName = `${unique('mover')}@example.com`;
  await request(t.app).post('/scim/v2/Users').set('Authorization', `Bearer ${made.body.token}`).send({ userName, active: true }).expect(201);

  const file = await request(t.app).get(`/api/setup/tenant/${id}/export`).set('Authorization', platform()).buffer(true).parse((res, cb) => {
    let text = '';
    res.setEncoding('utf8');
    res.on('data', (d: string) => (text += d));
    res.on('end', () => cb(null, text));
  });
  expect(file.status).toBe(200);
  await request(t.app).delete(`/api/setup/tenant/${id}`).set('Authorization', platform()).expect(200);
  const imported = await request(t.app).post('/api/setup/tenants/import').set('Authorization', platform()).set('Content-Type', 'application/x-ndjson').send(file.body as string).expect(201);

  expect(imported.body).toMatchObject({ tenant_id: id, slug });
  const notMoved = imported.body.not_moved as Array<{ item: string; detail: string }>;
  expect(notMoved.map((n) => n.item)).toEqual(['scim_tokens', 'identity_provider_secrets', 'webhook_secrets', 'invitation_tokens']);
  expect(notMoved.find((n) => n.item === 'scim_tokens')!.detail).toContain('POST /api/tenant/scim/tokens');
  expect(notMoved.find((n) => n.item === 'webhook_secrets')!.detail).toContain('POST /api/setup/webhooks');

  // As it says: the directory's users arrived, its token did not.
  const users = await request(t.app).get('/api/tenant/directory/users').set('Authorization', asAdmin).expect(200);
  expect(users.body.users.map((u: { user_name: string }) => u.user_name)).toEqual([userName]);
  expect((await request(t.app).get('/api/tenant/scim').set('Authorization', asAdmin).expect(200)).body.enabled).toBe(false);
  await request(t.app).get('/scim/v2/Users').set('Authorization', `Bearer ${made.body.token}`).expect(401);
});
