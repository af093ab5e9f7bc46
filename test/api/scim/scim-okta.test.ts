/**
 * Okta's provisioning sequence, as Okta sends it (docs/directory-sync.md#okta), end to end over
 * real HTTP: look up by userName before every create, POST, PUT of the whole user to update and
 * to deactivate, group push with PATCH of members; the person bound at first sign-in, the group's
 * role in the decision, deactivation and deletion at the next decision.
 */
import request from 'supertest';
import { startTestApp, type TestApp } from '../../helpers/app';
import { adminToken, closeOwnerConnection, createUser, ownerConnection, tokenFor, unique } from '../../helpers/factories';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ SERVICE_MULTI_TENANT_MODE: 'true' });
});
afterAll(async () => {
  await t.close();
  await closeOwnerConnection();
});

const USER = 'urn:ietf:params:scim:schemas:core:2.0:User';
const GROUP = 'urn:ietf:params:scim:schemas:core:2.0:Group';
const PATCH = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';

async function oktaTenant(): Promise<{ id: string; slug: string; admin: string; scim: string }> {
  const slug = unique('okta');
  const r = await request(t.app).post('/api/setup/tenant').set('Authorization', `Bearer ${adminToken()}`).send({ name: slug, slug }).expect(201);
  const a = await createUser(r.body.tenant_id, { role: 'admin' });
  const admin = `Bearer ${tokenFor({ sub: a.subject, claims: { tenant: slug } })}`;
  await request(t.app).post('/api/tenant/roles').set('Authorization', admin).send({ key: 'engineer', name: 'Engineer' }).expect(201);
  await request(t.app).put('/api/tenant/scim').set('Authorization', admin).send({ group_roles: [{ group: 'Engineering', role: 'engineer' }] }).expect(200);
  const tok = await request(t.app).post('/api/tenant/scim/tokens').set('Authorization', admin).send({ description: 'Okta' }).expect(201);
  return { id: r.body.tenant_id, slug, admin, scim: `Bearer ${tok.body.token}` };
}

/** Okta's user body: the whole user, every time. */
const oktaUser = (email: string, givenName: string, active: boolean) => ({
  schemas: [USER],
  userName: email,
  name: { givenName, familyName: 'Hopper' },
  emails: [{ primary: true, value: email, type: 'work' }],
  displayName: `${givenName} Hopper`,
  locale: 'en-US',
  externalId: '00u1abcdEFGH',
  groups: [],
  active,
});

const okta = (scim: string) => ({
  get: (path: string, query: Record<string, string | number> = {}) => request(t.app).get(`/scim/v2${path}`).query(query).set('Authorization', scim).set('Accept', 'application/scim+json'),
  send: (method: 'post' | 'put' | 'patch', path: string, body: unknown) =>
    request(t.app)[method](`/scim/v2${path}`).set('Authorization', scim).set('Content-Type', 'application/scim+json; charset=utf-8').send(JSON.stringify(body)),
  del: (path: string) => request(t.app).delete(`/scim/v2${path}`).set('Authorization', scim),
});

it("replays Okta's sequence: lookup, create, bind, group push, PUT update, PUT deactivate, reactivate, delete", async () => {
  const d = await oktaTenant();
  const o = okta(d.scim);
  const email = `${unique('grace')}@okta.example`;

  // Okta looks the user up before every create.
  const lookup = await o.get('/Users', { filter: `userName eq "${email}"`, startIndex: 1, count: 100 }).expect(200);
  expect(lookup.body).toMatchObject({ totalResults: 0, startIndex: 1, itemsPerPage: 0, Resources: [] });
  const created = await o.send('post', '/Users', oktaUser(email, 'Grace', true)).expect(201);
  const id = created.body.id as string;
  expect(created.body).toMatchObject({ userName: email, active: true, name: { givenName: 'Grace', familyName: 'Hopper' } });
  expect((await o.get('/Users', { filter: `userName eq "${email}"`, startIndex: 1, count: 100 }).expect(200)).body.Resources[0].id).toBe(id);
  await o.get(`/Users/${id}`).expect(200);

  // The person signs in: bound by verified email.
  const auth = `Bearer ${tokenFor({ sub: unique('okta-sub'), claims: { tenant: d.slug, email, email_verified: true } })}`;
  const first = await request(t.app).get('/api/tenant/decision').set('Authorization', auth).expect(200);
  expect(first.headers['x-tenant-role']).toBe('member');

  // Group push: create the group, then PATCH members in.
  const group = await o.send('post', '/Groups', { schemas: [GROUP], displayName: 'Engineering', members: [] }).expect(201);
  await o.send('patch', `/Groups/${group.body.id}`, { schemas: [PATCH], Operations: [{ op: 'replace', value: { id: group.body.id, displayName: 'Engineering' } }] }).expect(200);
  await o.send('patch', `/Groups/${group.body.id}`, { schemas: [PATCH], Operations: [{ op: 'add', path: 'members', value: [{ value: id, display: email }] }] }).expect(200);
  expect((await request(t.app).get('/api/tenant/decision').set('Authorization', auth).expect(200)).headers['x-tenant-role']).toBe('engineer');
  expect((await o.get('/Groups', { filter: 'displayName eq "Engineering"', excludedAttributes: 'members', startIndex: 1, count: 100 }).expect(200)).body.Resources).toEqual([
    expect.not.objectContaining({ members: expect.anything() }),
  ]);

  // Profile update: PUT of the whole user.
  const updated = await o.send('put', `/Users/${id}`, oktaUser(email, 'Amazing Grace', true)).expect(200);
  expect(updated.body.name.givenName).toBe('Amazing Grace');

  // Deactivation: PUT with active false; the very next decision is refused.
  await o.send('put', `/Users/${id}`, oktaUser(email, 'Amazing Grace', false)).expect(200);
  const off = await request(t.app).get('/api/tenant/decision').set('Authorization', auth).expect(403);
  expect(off.body.detail).toContain('deactivated by its directory');
  await o.send('put', `/Users/${id}`, oktaUser(email, 'Amazing Grace', true)).expect(200);
  expect((await request(t.app).get('/api/tenant/decision').set('Authorization', auth).expect(200)).body.user_id).toBe(first.body.user_id);

  // Unassigning from the group: PATCH remove by filter.
  await o.send('patch', `/Groups/${group.body.id}`, { schemas: [PATCH], Operations: [{ op: 'remove', path: `members[value eq "${id}"]` }] }).expect(200);
  expect((await request(t.app).get('/api/tenant/decision').set('Authorization', auth).expect(200)).headers['x-tenant-role']).toBe('member');

  // Deleted: gone, and a token naming the tenant does not provision the person again.
  await o.del(`/Users/${id}`).expect(204);
  await o.get(`/Users/${id}`).expect(404);
  expect((await request(t.app).get('/api/tenant/decision').set('Authorization', auth).expect(403)).body.detail).toMatch(/removed from tenant/);
  expect(await ownerConnection()('users').where({ tenant_id: d.id, id: first.body.user_id })).toEqual([]);

  // Another tenant's Okta sees none of it.
  const other = await oktaTenant();
  expect((await okta(other.scim).get('/Users', { filter: `userName eq "${email}"`, startIndex: 1, count: 100 }).expect(200)).body.totalResults).toBe(0);
  expect((await okta(other.scim).get('/Groups').expect(200)).body.totalResults).toBe(0);
});

it('a PUT without active keeps the user as it is: deactivated stays deactivated, and only active true reactivates', async () => {
  const d = await oktaTenant();
  const o = okta(d.scim);
  const email = `${unique('ada')}@okta.example`;
  const { active: _active, ...withoutActive } = oktaUser(email, 'Ada', true);
  // Created without active: active.
  const id = (await o.send('post', '/Users', withoutActive).expect(201)).body.id as string;
  expect((await o.get(`/Users/${id}`).expect(200)).body.active).toBe(true);
  const sub = unique('ada-sub');
  const auth = `Bearer ${tokenFor({ sub, claims: { tenant: d.slug, email, email_verified: true } })}`;
  await request(t.app).get('/api/tenant/decision').set('Authorization', auth).expect(200);

  await o.send('put', `/Users/${id}`, oktaUser(email, 'Ada', false)).expect(200);
  // A replace that leaves active out changes the name and not the deactivation.
  const renamed = await o.send('put', `/Users/${id}`, { ...withoutActive, name: { givenName: 'Augusta', familyName: 'King' } }).expect(200);
  expect(renamed.body).toMatchObject({ active: false, name: { givenName: 'Augusta', familyName: 'King' } });
  expect((await o.get(`/Users/${id}`).expect(200)).body.active).toBe(false);
  expect((await request(t.app).get('/api/tenant/decision').set('Authorization', auth).expect(403)).body.detail).toContain('deactivated by its directory');

  // Only active true brings them back.
  expect((await o.send('put', `/Users/${id}`, oktaUser(email, 'Ada', true)).expect(200)).body.active).toBe(true);
  await request(t.app).get('/api/tenant/decision').set('Authorization', auth).expect(200);
});
