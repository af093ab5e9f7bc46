/**
 * Microsoft Entra ID's provisioning, as Entra sends it (docs/directory-sync.md#microsoft-entra-id),
 * end to end over real HTTP: capitalized ops, `active` as "True" / "False", PATCH without path
 * whose value has dotted keys, `emails[type eq "work"].value`, "Add" where "Replace" is meant,
 * group members added one and many at a time and removed by `members[value eq "<id>"]`; the
 * person bound by the `oid` claim; deactivation and deletion at the next decision.
 */
import request from 'supertest';
import { startTestApp, type TestApp } from './helpers/app';
import { adminToken, closeOwnerConnection, createUser, ownerConnection, tokenFor, unique } from './factories';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ SERVICE_MULTI_TENANT_MODE: 'true' });
});
afterAll(async () => {
  await t.close();
  await closeOwnerConnection();
});

const USER = 'urn:ietf:params:scim:schemas:core:2.0:User';
const ENTERPRISE = 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User';
const PATCH = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';

async function entraTenant(): Promise<{ id: string; slug: string; admin: string; scim: string }> {
  const slug = unique('entra');
  const r = await request(t.app).post('/api/setup/tenant').set('Authorization', `Bearer ${adminToken()}`).send({ name: slug, slug }).expect(201);
  const a = await createUser(r.body.tenant_id, { role: 'admin' });
  const admin = `Bearer ${tokenFor({ sub: a.subject, claims: { tenant: slug } })}`;
  await request(t.app).put('/api/tenant/scim').set('Authorization', admin).send({ group_roles: [{ group: 'Tenant Admins', role: 'admin' }], external_id_claim: 'oid' }).expect(200);
  const tok = await request(t.app).post('/api/tenant/scim/tokens').set('Authorization', admin).send({ description: 'Entra ID' }).expect(201);
  return { id: r.body.tenant_id, slug, admin, scim: `Bearer ${tok.body.token}` };
}

const entra = (scim: string) => ({
  get: (path: string, query: Record<string, string> = {}) => request(t.app).get(`/scim/v2${path}`).query(query).set('Authorization', scim),
  send: (method: 'post' | 'patch', path: string, body: unknown) => request(t.app)[method](`/scim/v2${path}`).set('Authorization', scim).set('Content-Type', 'application/scim+json').send(JSON.stringify(body)),
  patch: (path: string, Operations: unknown[]) => request(t.app).patch(`/scim/v2${path}`).set('Authorization', scim).set('Content-Type', 'application/scim+json').send(JSON.stringify({ schemas: [PATCH], Operations })),
  del: (path: string) => request(t.app).delete(`/scim/v2${path}`).set('Authorization', scim),
});

async function entraUser(e: ReturnType<typeof entra>, upn: string, oid: string): Promise<string> {
  expect((await e.get('/Users', { filter: `userName eq "${upn}"` }).expect(200)).body.totalResults).toBe(0);
  const r = await e
    .send('post', '/Users', {
      schemas: [USER, ENTERPRISE],
      externalId: oid,
      userName: upn,
      active: true,
      displayName: 'Alan Turing',
      emails: [{ primary: true, type: 'work', value: upn }],
      name: { formatted: 'Alan Turing', familyName: 'Turing', givenName: 'Alan' },
      title: 'Mathematician',
      [ENTERPRISE]: { employeeNumber: '42', department: 'Codebreaking' },
    })
    .expect(201);
  return r.body.id as string;
}

it("replays Entra ID's sequence: create, PATCH the way Entra sends it, bind by oid, groups, deactivate, reactivate, delete", async () => {
  const d = await entraTenant();
  const e = entra(d.scim);
  const upn = `${unique('alan')}@contoso.example`;
  const oid = unique('oid');
  const id = await entraUser(e, upn, oid);

  // Capitalized ops, a path with a value filter, "Add" where "Replace" is meant, the enterprise extension (not kept).
  const patched = await e
    .patch(`/Users/${id}`, [
      { op: 'Replace', path: 'emails[type eq "work"].value', value: `new.${upn}` },
      { op: 'Add', path: 'displayName', value: 'Alan M. Turing' },
      { op: 'Replace', path: `${ENTERPRISE}:department`, value: 'Computing' },
      { op: 'Add', path: 'name.givenName', value: 'Alan Mathison' },
    ])
    .expect(200);
  expect(patched.body).toMatchObject({ displayName: 'Alan M. Turing', emails: [{ type: 'work', value: `new.${upn}`, primary: true }], name: { givenName: 'Alan Mathison', familyName: 'Turing' } });
  // No path: an object with dotted keys and active as a string.
  const noPath = await e.patch(`/Users/${id}`, [{ op: 'Replace', value: { 'name.familyName': 'Turing-Smith', 'name.givenName': 'A.', active: 'True', [`${ENTERPRISE}:manager`]: { value: 'x' } } }]).expect(200);
  expect(noPath.body).toMatchObject({ name: { givenName: 'A.', familyName: 'Turing-Smith' }, active: true });

  // The person signs in with Entra's token: bound by oid (their email there is another).
  const auth = `Bearer ${tokenFor({ sub: unique('entra-sub'), claims: { tenant: d.slug, oid, email: `${unique('x')}@other.example`, email_verified: true } })}`;
  const first = await request(t.app).get('/api/tenant/decision').set('Authorization', auth).expect(200);
  expect(first.headers['x-tenant-role']).toBe('member');

  // Groups: one member added, then many, then removed by filter and by value list.
  const group = await e.send('post', '/Groups', { schemas: ['urn:ietf:params:scim:schemas:core:2.0:Group'], externalId: unique('gid'), displayName: 'Tenant Admins', members: [] }).expect(201);
  const others = [await entraUser(e, `${unique('b')}@contoso.example`, unique('oid')), await entraUser(e, `${unique('c')}@contoso.example`, unique('oid'))];
  await e.patch(`/Groups/${group.body.id}`, [{ op: 'Add', path: 'members', value: [{ value: id }] }]).expect(200);
  expect((await request(t.app).get('/api/tenant/decision').query({ role: 'admin' }).set('Authorization', auth).expect(200)).headers['x-tenant-role']).toBe('admin');
  const many = await e.patch(`/Groups/${group.body.id}`, [{ op: 'Add', path: 'members', value: others.map((value) => ({ value })) }]).expect(200);
  expect(many.body.members.map((m: { value: string }) => m.value).sort()).toEqual([id, ...others].sort());
  await e.patch(`/Groups/${group.body.id}`, [{ op: 'Remove', path: 'members', value: [{ value: others[0] }] }, { op: 'Remove', path: `members[value eq "${others[1]}"]` }]).expect(200);
  expect((await e.get(`/Groups/${group.body.id}`).expect(200)).body.members.map((m: { value: string }) => m.value)).toEqual([id]);
  await e.patch(`/Groups/${group.body.id}`, [{ op: 'Remove', path: `members[value eq "${id}"]` }]).expect(200);
  expect((await request(t.app).get('/api/tenant/decision').set('Authorization', auth).expect(200)).headers['x-tenant-role']).toBe('member');
  // Rename (Replace displayName) and a filter by externalId.
  await e.patch(`/Groups/${group.body.id}`, [{ op: 'Replace', path: 'displayName', value: 'Former Admins' }]).expect(200);
  expect((await e.get('/Groups', { filter: `externalId eq "${group.body.externalId}"` }).expect(200)).body.Resources[0].displayName).toBe('Former Admins');

  // Disabled in Entra: active "False"; the very next decision is refused; "True" restores.
  await e.patch(`/Users/${id}`, [{ op: 'Replace', path: 'active', value: 'False' }]).expect(200);
  expect((await request(t.app).get('/api/tenant/decision').set('Authorization', auth).expect(403)).body.detail).toContain('deactivated by its directory');
  await e.patch(`/Users/${id}`, [{ op: 'Replace', path: 'active', value: 'True' }]).expect(200);
  await request(t.app).get('/api/tenant/decision').set('Authorization', auth).expect(200);

  // Deleted in Entra: gone, and never provisioned again by a token naming the tenant.
  await e.del(`/Users/${id}`).expect(204);
  expect((await request(t.app).get('/api/tenant/decision').set('Authorization', auth).expect(403)).body.detail).toMatch(/removed from tenant .* by its directory/);
  expect(await ownerConnection()('member_removals').where({ tenant_id: d.id }).select('reason')).toEqual([{ reason: 'deprovisioned' }]);

  // Malformed PATCHes are refused and change nothing.
  const before = (await e.get(`/Users/${others[0]}`).expect(200)).body;
  await e.patch(`/Users/${others[0]}`, [{ op: 'Replace', path: 'emails[type eq "work"', value: 'x' }]).expect(400);
  await e.patch(`/Users/${others[0]}`, [{ op: 'Replace', path: 'active', value: 'Nope' }]).expect(400);
  await e.patch(`/Groups/${group.body.id}`, [{ op: 'Add', path: 'members', value: [{ value: '00000000-0000-4000-8000-000000000000' }] }]).expect(400);
  expect((await e.get(`/Users/${others[0]}`).expect(200)).body).toEqual(before);
});

it('a PATCH of 1 000 member operations is accepted; 1 001 are refused', async () => {
  const d = await entraTenant();
  const e = entra(d.scim);
  const group = await e.send('post', '/Groups', { displayName: 'Big', members: [] }).expect(201);
  const ids = (await ownerConnection()('directory_users').insert(Array.from({ length: 1000 }, (_, i) => ({ tenant_id: d.id, user_name: `u${i}@big.example`, user_name_key: `u${i}@big.example` }))).returning('id')).map((r: { id: string }) => r.id);
  const tooMany = await e.patch(`/Groups/${group.body.id}`, [{ op: 'Add', path: 'members', value: [...ids, ids[0]].map((value) => ({ value })) }]);
  expect(tooMany.status).toBe(400);
  const ok = await e.patch(`/Groups/${group.body.id}`, ids.map((value) => ({ op: 'Add', path: 'members', value: [{ value }] }))).expect(200);
  expect(ok.body.members).toHaveLength(1000);
});
