/**
 * Directory users in decisions (docs/directory-sync.md): bound at their person's first sign-in
 * by verified email or the external id claim, for a trusted issuer only; groups give roles;
 * deactivation and deletion refuse the very next decision (answered from memory); a
 * directory-managed tenant never provisions from claims; a deletion sticks.
 */
import request from 'supertest';
import { LOCAL_ISSUER } from '../../../src/auth/local-keys';
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

const PATCH = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';

async function directory(body: Record<string, unknown> = {}): Promise<{ id: string; slug: string; admin: string; scim: string }> {
  const slug = unique('dec');
  const r = await request(t.app).post('/api/setup/tenant').set('Authorization', `Bearer ${adminToken()}`).send({ name: slug, slug, ...body }).expect(201);
  const id = r.body.tenant_id as string;
  const a = await createUser(id, { role: 'admin' });
  const admin = `Bearer ${tokenFor({ sub: a.subject, claims: { tenant: slug } })}`;
  const made = await request(t.app).post('/api/tenant/scim/tokens').set('Authorization', admin).send({}).expect(201);
  return { id, slug, admin, scim: `Bearer ${made.body.token}` };
}

/** A person's token naming the tenant by claim. */
const person = (slug: string, email: string, claims: Record<string, unknown> = {}) =>
  `Bearer ${tokenFor({ sub: unique('p'), claims: { tenant: slug, email, email_verified: true, ...claims } })}`;

async function scimUser(scim: string, userName: string, extra: Record<string, unknown> = {}): Promise<string> {
  const r = await request(t.app).post('/scim/v2/Users').set('Authorization', scim).send({ userName, emails: [{ value: userName, primary: true }], active: true, ...extra }).expect(201);
  return r.body.id as string;
}

const decision = (auth: string, query: Record<string, string> = {}) => request(t.app).get('/api/tenant/decision').query(query).set('Authorization', auth);

describe('binding at first sign-in', () => {
  it('by verified email (trimmed, NFKC, case-folded): the member is directory_managed; the binding is the event', async () => {
    const d = await directory();
    const email = `${unique('bind')}@example.com`;
    const duId = await scimUser(d.scim, email.toUpperCase());
    const auth = person(d.slug, `  ${email} `);
    const ok = await decision(auth).expect(200);
    expect(ok.headers['x-tenant-role']).toBe('member');
    const bound = await ownerConnection()('directory_users').where({ id: duId }).first('user_id');
    expect(bound.user_id).toBe(ok.body.user_id);
    const members = await request(t.app).get('/api/tenant/members').set('Authorization', d.admin).expect(200);
    expect(members.body.members.find((m: { user_id: string }) => m.user_id === ok.body.user_id).directory_managed).toBe(true);
    // The same person again: the same membership.
    expect((await decision(auth).expect(200)).body.user_id).toBe(ok.body.user_id);
  });

  it('an unverified email never binds; an unknown person is refused; the tenant no longer provisions from claims', async () => {
    const d = await directory();
    const email = `${unique('unv')}@example.com`;
    await scimUser(d.scim, email);
    const unverified = await decision(person(d.slug, email, { email_verified: false })).expect(403);
    expect(unverified.body.detail).toContain('directory');
    const stranger = await decision(person(d.slug, `${unique('who')}@example.com`)).expect(403);
    expect(stranger.body.detail).toContain('Its members come from its directory');
    expect(await ownerConnection()('users').where({ tenant_id: d.id })).toHaveLength(1);
  });

  it("by the tenant's external id claim against externalId", async () => {
    const d = await directory();
    await request(t.app).put('/api/tenant/scim').set('Authorization', d.admin).send({ external_id_claim: 'oid' }).expect(200);
    const oid = unique('oid');
    await scimUser(d.scim, `${unique('ext')}@corp.example`, { externalId: oid });
    await decision(person(d.slug, `${unique('other')}@elsewhere.example`, { email_verified: false, oid })).expect(200);
  });

  it('only for a trusted issuer: a tenant with a claims_issuer refuses tokens of another', async () => {
    const d = await directory({ membership_policy: { provision_from_claims: true, claims_issuer: 'https://idp.other.example' } });
    const email = `${unique('iss')}@example.com`;
    await scimUser(d.scim, email);
    const r = await decision(person(d.slug, email)).expect(403);
    expect(r.body.detail).toContain('directory');
    expect(LOCAL_ISSUER).not.toBe('https://idp.other.example');
  });
});

describe('leavers leave at once', () => {
  it('active false → the very next decision is 403 saying so; active true → 200; DELETE → 403 and never provisioned again', async () => {
    const d = await directory();
    const email = `${unique('leaver')}@example.com`;
    const duId = await scimUser(d.scim, email);
    const auth = person(d.slug, email);
    const userId = (await decision(auth).expect(200)).body.user_id as string;
    // Answered from memory from here on.
    await decision(auth).expect(200);

    await request(t.app).patch(`/scim/v2/Users/${duId}`).set('Authorization', d.scim).send({ schemas: [PATCH], Operations: [{ op: 'Replace', path: 'active', value: 'False' }] }).expect(200);
    const off = await decision(auth).expect(403);
    expect(off.body).toMatchObject({ error: 'Access denied', detail: expect.stringContaining('deactivated by its directory') });
    await request(t.app).get('/api/tenant').set('Authorization', auth).expect(403);

    await request(t.app).put(`/scim/v2/Users/${duId}`).set('Authorization', d.scim).send({ userName: email, active: true }).expect(200);
    expect((await decision(auth).expect(200)).body.user_id).toBe(userId);

    await request(t.app).delete(`/scim/v2/Users/${duId}`).set('Authorization', d.scim).expect(204);
    const gone = await decision(auth).expect(403);
    expect(gone.body.detail).toMatch(/removed from tenant .* by its directory/);
    expect(await ownerConnection()('users').where({ tenant_id: d.id, id: userId })).toEqual([]);
    // The directory creating them again does not undo the removal: a token naming the tenant stays refused.
    await scimUser(d.scim, email);
    expect((await decision(auth).expect(403)).body.detail).toMatch(/removed from tenant/);
  });
});

describe('groups give roles', () => {
  it("the first mapping whose group holds the member, else member; visible in the next decision", async () => {
    const d = await directory();
    await request(t.app).post('/api/tenant/roles').set('Authorization', d.admin).send({ key: 'auditor', name: 'Auditor' }).expect(201);
    await request(t.app)
      .put('/api/tenant/scim')
      .set('Authorization', d.admin)
      .send({ group_roles: [{ group: 'Admins', role: 'admin' }, { group: 'Auditors', role: 'auditor' }] })
      .expect(200);
    const email = `${unique('grp')}@example.com`;
    const duId = await scimUser(d.scim, email);
    const auth = person(d.slug, email);
    expect((await decision(auth).expect(200)).headers['x-tenant-role']).toBe('member');

    const auditors = await request(t.app).post('/scim/v2/Groups').set('Authorization', d.scim).send({ displayName: 'Auditors', members: [{ value: duId }] }).expect(201);
    expect((await decision(auth).expect(200)).headers['x-tenant-role']).toBe('auditor');
    const admins = await request(t.app).post('/scim/v2/Groups').set('Authorization', d.scim).send({ displayName: 'Admins', members: [] }).expect(201);
    await request(t.app).patch(`/scim/v2/Groups/${admins.body.id}`).set('Authorization', d.scim).send({ schemas: [PATCH], Operations: [{ op: 'add', path: 'members', value: [{ value: duId }] }] }).expect(200);
    await decision(auth, { role: 'admin' }).expect(200);
    // Admin by the directory: the tenant's admin endpoints admit them.
    await request(t.app).get('/api/tenant/scim').set('Authorization', auth).expect(200);

    await request(t.app).patch(`/scim/v2/Groups/${admins.body.id}`).set('Authorization', d.scim).send({ schemas: [PATCH], Operations: [{ op: 'remove', path: `members[value eq "${duId}"]` }] }).expect(200);
    expect((await decision(auth).expect(200)).headers['x-tenant-role']).toBe('auditor');
    await request(t.app).delete(`/scim/v2/Groups/${auditors.body.id}`).set('Authorization', d.scim).expect(204);
    expect((await decision(auth).expect(200)).headers['x-tenant-role']).toBe('member');

    const changes = await ownerConnection()('events').where({ tenant_id: d.id, action: 'member.role_changed' }).orderBy('occurred_at').select('data');
    expect(changes.map((e) => [e.data.before.role, e.data.after.role, e.data.source])).toEqual([
      ['member', 'auditor', 'directory_groups'],
      ['auditor', 'admin', 'directory_groups'],
      ['admin', 'auditor', 'directory_groups'],
      ['auditor', 'member', 'directory_groups'],
    ]);
    const groupEvents = await ownerConnection()('events').where({ tenant_id: d.id }).where('action', 'like', 'group.%').orderBy('occurred_at').select('action', 'target_id', 'actor_scim_token_id', 'data');
    expect(groupEvents.map((e) => [e.action, e.target_id])).toEqual([
      ['group.created', auditors.body.id],
      ['group.created', admins.body.id],
      ['group.updated', admins.body.id],
      ['group.updated', admins.body.id],
      ['group.deleted', auditors.body.id],
    ]);
    expect(groupEvents.map((e) => [e.data.members_added, e.data.members_removed])).toEqual([[1, undefined], [0, undefined], [1, 0], [0, 1], [undefined, undefined]]);
    for (const e of groupEvents) expect(e.actor_scim_token_id).toEqual(expect.any(String));
  });

  it('a directory-driven demotion of the last admin is not held back by the last-admin rule', async () => {
    const d = await directory();
    await request(t.app).put('/api/tenant/scim').set('Authorization', d.admin).send({ group_roles: [{ group: 'Admins', role: 'admin' }] }).expect(200);
    const email = `${unique('last')}@example.com`;
    const duId = await scimUser(d.scim, email);
    const group = await request(t.app).post('/scim/v2/Groups').set('Authorization', d.scim).send({ displayName: 'Admins', members: [{ value: duId }] }).expect(201);
    const auth = person(d.slug, email);
    const me = (await decision(auth, { role: 'admin' }).expect(200)).body.user_id as string;
    // The other admin leaves; the directory member is the last admin.
    await ownerConnection()('users').where({ tenant_id: d.id }).whereNot({ id: me }).delete();
    await request(t.app).put(`/scim/v2/Groups/${group.body.id}`).set('Authorization', d.scim).send({ displayName: 'Admins', members: [] }).expect(200);
    expect((await decision(auth).expect(200)).headers['x-tenant-role']).toBe('member');
  });
});

describe('a platform admin who is also a directory member', () => {
  it('deactivated: refused as a member (decision, GET /api/tenant, tenant token); keeps the platform powers over the tenant', async () => {
    const d = await directory();
    const email = `${unique('padmin')}@example.com`;
    const duId = await scimUser(d.scim, email);
    const sub = unique('padmin');
    const claims = { tenant: d.slug, email, email_verified: true };
    // Bound at their first sign-in (a token that did not make them a platform admin yet).
    const userId = (await decision(`Bearer ${tokenFor({ sub, claims })}`).expect(200)).body.user_id as string;
    const admin = `Bearer ${tokenFor({ sub, admin: true, claims })}`;
    expect((await decision(admin).expect(200)).body.user_id).toBe(userId);

    await request(t.app).patch(`/scim/v2/Users/${duId}`).set('Authorization', d.scim).send({ schemas: [PATCH], Operations: [{ op: 'Replace', path: 'active', value: 'False' }] }).expect(200);
    const off = await decision(admin).expect(403);
    expect(off.body.detail).toContain('deactivated by its directory');
    expect((await request(t.app).get('/api/tenant').set('Authorization', admin).expect(403)).body.detail).toContain('deactivated by its directory');
    expect((await request(t.app).post('/api/tenant/token').set('Authorization', admin).expect(403)).body.detail).toContain('deactivated by its directory');
    await request(t.app).get('/api/tenant/members').set('Authorization', admin).expect(403);

    // The platform's powers: the tenant's admin and platform-admin operations, and /api/setup.
    await request(t.app).get('/api/tenant/scim').set('Authorization', admin).expect(200);
    await request(t.app).get('/api/tenant/scim/tokens').set('Authorization', admin).expect(200);
    await request(t.app).get('/api/setup/tenants').query({ q: d.slug }).set('Authorization', admin).expect(200);
    // Acting as a platform admin, not as the deactivated member: an event names no membership of theirs.
    const minted = await request(t.app).post('/api/tenant/scim/tokens').set('Authorization', admin).send({ description: 'by the operator' }).expect(201);
    const ev = await ownerConnection()('events').where({ tenant_id: d.id, action: 'scim_token.created', target_id: minted.body.token_id }).first('actor_platform_admin');
    expect(ev.actor_platform_admin).toBe(true);

    await request(t.app).patch(`/scim/v2/Users/${duId}`).set('Authorization', d.scim).send({ schemas: [PATCH], Operations: [{ op: 'Replace', path: 'active', value: 'True' }] }).expect(200);
    expect((await decision(admin).expect(200)).body.user_id).toBe(userId);
  });
});

describe('members who were there first', () => {
  async function existingMember(d: { id: string; slug: string }, role: 'member' | 'admin' = 'member') {
    const email = `${unique('first')}@example.com`;
    const u = await createUser(d.id, { email, role });
    return { ...u, email, auth: `Bearer ${tokenFor({ sub: u.subject, claims: { tenant: d.slug, email, email_verified: true } })}` };
  }

  it('the directory creates them (201, no second membership); their next request binds them, with the role its groups give', async () => {
    const d = await directory();
    await request(t.app).put('/api/tenant/scim').set('Authorization', d.admin).send({ group_roles: [{ group: 'Admins', role: 'admin' }] }).expect(200);
    const m = await existingMember(d);
    expect((await decision(m.auth).expect(200)).headers['x-tenant-role']).toBe('member');
    // Okta's import-and-match looks first: no directory user has their userName yet.
    const looked = await request(t.app).get('/scim/v2/Users').query({ filter: `userName eq "${m.email}"`, startIndex: 1, count: 100 }).set('Authorization', d.scim).expect(200);
    expect(looked.body.totalResults).toBe(0);
    const duId = await scimUser(d.scim, m.email.toUpperCase());
    await request(t.app).post('/scim/v2/Groups').set('Authorization', d.scim).send({ displayName: 'Admins', members: [{ value: duId }] }).expect(201);
    // The same userName again is the directory's mistake: 409 uniqueness.
    const again = await request(t.app).post('/scim/v2/Users').set('Authorization', d.scim).send({ userName: m.email, active: true });
    expect(again.status).toBe(409);
    expect(again.body.scimType).toBe('uniqueness');

    const ok = await decision(m.auth).expect(200);
    expect(ok.body.user_id).toBe(m.id);
    expect(ok.headers['x-tenant-role']).toBe('admin');
    expect(await ownerConnection()('users').where({ tenant_id: d.id }).count<{ n: string }[]>({ n: '*' })).toEqual([{ n: '2' }]);
    expect((await ownerConnection()('directory_users').where({ id: duId }).first('user_id')).user_id).toBe(m.id);
    const members = await request(t.app).get('/api/tenant/members').set('Authorization', d.admin).expect(200);
    expect(members.body.members.find((x: { user_id: string }) => x.user_id === m.id).directory_managed).toBe(true);
    const events = await ownerConnection()('events').where({ tenant_id: d.id, target_id: m.id }).orderBy('occurred_at').select('action', 'data');
    expect(events.map((e: { action: string }) => e.action)).toEqual(['member.updated', 'member.role_changed']);
    expect(events[0].data).toMatchObject({ bound: true, existing_member: true });

    // The directory's from now on: a deactivation refuses them at once.
    await request(t.app).patch(`/scim/v2/Users/${duId}`).set('Authorization', d.scim).send({ schemas: [PATCH], Operations: [{ op: 'Replace', path: 'active', value: 'False' }] }).expect(200);
    expect((await decision(m.auth).expect(403)).body.detail).toContain('deactivated by its directory');
  });

  it('several first requests at once bind them once', async () => {
    const d = await directory();
    const m = await existingMember(d);
    const duId = await scimUser(d.scim, m.email);
    const answers = await Promise.all(Array.from({ length: 6 }, () => decision(m.auth)));
    expect(answers.map((r) => r.status)).toEqual([200, 200, 200, 200, 200, 200]);
    expect((await ownerConnection()('directory_users').where({ id: duId }).first('user_id')).user_id).toBe(m.id);
    expect(await ownerConnection()('events').where({ tenant_id: d.id, target_id: m.id, action: 'member.updated' }).count<{ n: string }[]>({ n: '*' })).toEqual([{ n: '1' }]);
  });

  it('deactivated before their next request: that request binds them and is refused', async () => {
    const d = await directory();
    const m = await existingMember(d, 'admin');
    const duId = await scimUser(d.scim, m.email);
    await request(t.app).put(`/scim/v2/Users/${duId}`).set('Authorization', d.scim).send({ userName: m.email, active: false }).expect(200);
    expect((await decision(m.auth).expect(403)).body.detail).toContain('deactivated by its directory');
    expect((await request(t.app).get('/api/tenant/members').set('Authorization', m.auth).expect(403)).body.detail).toContain('deactivated by its directory');
    // The binding stands, though the request was refused.
    expect((await ownerConnection()('directory_users').where({ id: duId }).first('user_id')).user_id).toBe(m.id);
  });

  it('an unverified email binds nobody: the member stays as they were', async () => {
    const d = await directory();
    const m = await existingMember(d);
    const duId = await scimUser(d.scim, m.email, { active: false });
    const unverified = `Bearer ${tokenFor({ sub: m.subject, claims: { tenant: d.slug, email: m.email, email_verified: false } })}`;
    expect((await decision(unverified).expect(200)).body.user_id).toBe(m.id);
    expect((await ownerConnection()('directory_users').where({ id: duId }).first('user_id')).user_id).toBeNull();
  });
});

describe("other tenants' decisions stay in memory", () => {
  it("a directory's writes drop only its own tenant's decision facts on this instance", async () => {
    const facts = t.services.decisionMemory?.facts;
    expect(facts).toBeTruthy();
    const d = await directory();
    const neighbour = await directory();
    const forget = jest.spyOn(facts!, 'forget');
    const changed = jest.spyOn(facts!, 'changed');
    const dropAll = jest.spyOn(facts!, 'dropAll');
    try {
      const duId = await scimUser(d.scim, `${unique('mem')}@example.com`);
      await request(t.app).post('/scim/v2/Groups').set('Authorization', d.scim).send({ displayName: 'Everyone', members: [{ value: duId }] }).expect(201);
      await request(t.app).patch(`/scim/v2/Users/${duId}`).set('Authorization', d.scim).send({ schemas: [PATCH], Operations: [{ op: 'Replace', path: 'active', value: 'False' }] }).expect(200);
      await request(t.app).put('/api/tenant/scim').set('Authorization', d.admin).send({ external_id_claim: 'oid' }).expect(200);
      // The directory's tenant is dropped for its committed changes; never everything, never the
      // neighbour. (Other files' writes to the shared database reach this instance's memory
      // too, each naming its own tenant: those drops are theirs, not the directory's.)
      const drops = [...forget.mock.calls, ...changed.mock.calls].map((c) => c[0]);
      expect(drops).toContain(d.id);
      expect(drops).not.toContain('*');
      expect(drops).not.toContain(neighbour.id);
      expect(dropAll).not.toHaveBeenCalled();
    } finally {
      forget.mockRestore();
      changed.mockRestore();
      dropAll.mockRestore();
    }
  });
});
