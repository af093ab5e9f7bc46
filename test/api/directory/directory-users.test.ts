/**
 * What a tenant's admins see of its directory (docs/directory-sync.md#what-tenant-admins-see):
 * GET /api/tenant/directory/users (listDirectoryUsers) lists every directory user, deactivated
 * and not yet signed in included, with its groups and member id; members carry
 * directory_managed and directory_active; a directory's member keeps the directory's role
 * (PATCH of their role is 409 naming the directory).
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

const PATCH = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';
const platform = () => `Bearer ${adminToken()}`;

/** A directory-managed tenant: its admin (not a directory user), a plain member, and a SCIM token. */
async function directory(): Promise<{ id: string; slug: string; admin: string; adminId: string; member: string; memberId: string; scim: string }> {
  const slug = unique('dirlist');
  const r = await request(t.app).post('/api/setup/tenant').set('Authorization', platform()).send({ name: slug, slug }).expect(201);
  const id = r.body.tenant_id as string;
  const a = await createUser(id, { role: 'admin' });
  const m = await createUser(id, { role: 'member' });
  const auth = (sub: string) => `Bearer ${tokenFor({ sub, claims: { tenant: slug } })}`;
  const made = await request(t.app).post('/api/tenant/scim/tokens').set('Authorization', auth(a.subject)).send({}).expect(201);
  return { id, slug, admin: auth(a.subject), adminId: a.id, member: auth(m.subject), memberId: m.id, scim: `Bearer ${made.body.token}` };
}

async function scimUser(scim: string, userName: string, extra: Record<string, unknown> = {}): Promise<string> {
  const r = await request(t.app).post('/scim/v2/Users').set('Authorization', scim).send({ userName, emails: [{ value: userName, primary: true }], active: true, ...extra }).expect(201);
  return r.body.id as string;
}

/** The person of a directory user signs in (a decision with their verified email): their member id. */
async function signIn(slug: string, email: string): Promise<string> {
  const auth = `Bearer ${tokenFor({ sub: unique('p'), claims: { tenant: slug, email, email_verified: true } })}`;
  return (await request(t.app).get('/api/tenant/decision').set('Authorization', auth).expect(200)).body.user_id as string;
}

const deactivate = (scim: string, id: string) =>
  request(t.app).patch(`/scim/v2/Users/${id}`).set('Authorization', scim).send({ schemas: [PATCH], Operations: [{ op: 'replace', path: 'active', value: false }] }).expect(200);

describe('GET /api/tenant/directory/users', () => {
  it('lists every directory user oldest first: bound or not yet signed in, active or not, with groups and member_id, page by page', async () => {
    const d = await directory();
    const bound = `${unique('ada')}@example.com`;
    const waiting = `${unique('bob')}@example.com`;
    const gone = `${unique('cy')}@example.com`;
    const boundId = await scimUser(d.scim, bound, { displayName: 'Ada', externalId: 'ext-ada' });
    const waitingId = await scimUser(d.scim, waiting);
    const goneId = await scimUser(d.scim, gone);
    const group = await request(t.app).post('/scim/v2/Groups').set('Authorization', d.scim).send({ displayName: 'Engineering', members: [{ value: boundId }, { value: goneId }] }).expect(201);
    const memberId = await signIn(d.slug, bound);
    await deactivate(d.scim, goneId);

    const all = await request(t.app).get('/api/tenant/directory/users').set('Authorization', d.admin).expect(200);
    expect(all.body).toEqual({
      users: [
        {
          directory_user_id: boundId,
          user_name: bound,
          external_id: 'ext-ada',
          display_name: 'Ada',
          emails: [bound],
          active: true,
          role: 'member',
          groups: [{ group_id: group.body.id, display_name: 'Engineering' }],
          member_id: memberId,
          created_at: expect.any(String),
          updated_at: expect.any(String),
        },
        expect.objectContaining({ directory_user_id: waitingId, user_name: waiting, active: true, groups: [], member_id: null }),
        expect.objectContaining({ directory_user_id: goneId, user_name: gone, active: false, groups: [{ group_id: group.body.id, display_name: 'Engineering' }], member_id: null }),
      ],
      next_cursor: null,
    });

    const first = await request(t.app).get('/api/tenant/directory/users').query({ limit: 2 }).set('Authorization', d.admin).expect(200);
    expect(first.body.users.map((u: { directory_user_id: string }) => u.directory_user_id)).toEqual([boundId, waitingId]);
    const second = await request(t.app).get('/api/tenant/directory/users').query({ limit: 2, cursor: first.body.next_cursor }).set('Authorization', d.admin).expect(200);
    expect({ ids: second.body.users.map((u: { directory_user_id: string }) => u.directory_user_id), next: second.body.next_cursor }).toEqual({ ids: [goneId], next: null });
    const bad = await request(t.app).get('/api/tenant/directory/users').query({ cursor: 'not-a-cursor' }).set('Authorization', d.admin).expect(400);
    expect(bad.body.error).toBe('Validation error');
  });

  it('tenant admins and platform admins through X-Tenant; not a plain member; another tenant sees only its own', async () => {
    const d = await directory();
    const other = await directory();
    const id = await scimUser(d.scim, `${unique('dee')}@example.com`);
    const viaPlatform = await request(t.app).get('/api/tenant/directory/users').set('Authorization', platform()).set('X-Tenant', d.slug).expect(200);
    expect(viaPlatform.body.users.map((u: { directory_user_id: string }) => u.directory_user_id)).toEqual([id]);
    const refused = await request(t.app).get('/api/tenant/directory/users').set('Authorization', d.member).expect(403);
    expect(refused.body.error).toBe('Access denied');
    expect(refused.body.detail).toContain('tenant:directory:manage');
    expect((await request(t.app).get('/api/tenant/directory/users').set('Authorization', other.admin).expect(200)).body).toEqual({ users: [], next_cursor: null });
  });
});

describe('members and the directory', () => {
  it('members carry directory_managed and directory_active (false once the directory deactivates them)', async () => {
    const d = await directory();
    const email = `${unique('eve')}@example.com`;
    const duId = await scimUser(d.scim, email);
    const memberId = await signIn(d.slug, email);
    const list = async () => {
      const r = await request(t.app).get('/api/tenant/members').set('Authorization', d.admin).expect(200);
      return Object.fromEntries((r.body.members as Array<{ user_id: string; directory_managed: boolean; directory_active: boolean | null }>).map((m) => [m.user_id, [m.directory_managed, m.directory_active]]));
    };
    expect(await list()).toEqual({ [d.adminId]: [false, null], [d.memberId]: [false, null], [memberId]: [true, true] });
    await deactivate(d.scim, duId);
    expect((await list())[memberId]).toEqual([true, false]);
  });

  it("a directory's member keeps the directory's role: PATCH of it is 409 naming the directory, for tenant and platform admins; nothing changes", async () => {
    const d = await directory();
    const email = `${unique('fay')}@example.com`;
    await scimUser(d.scim, email);
    const memberId = await signIn(d.slug, email);
    for (const [who, headers] of [
      ['tenant admin', { Authorization: d.admin }],
      ['platform admin', { Authorization: platform(), 'X-Tenant': d.slug }],
    ] as const) {
      const r = await request(t.app).patch(`/api/tenant/members/${memberId}`).set(headers).send({ role: 'admin' });
      expect({ who, status: r.status, error: r.body.error }).toEqual({ who, status: 409, error: 'Conflict' });
      expect(r.body.detail).toContain("tenant's directory (SCIM)");
      expect(r.body.detail).toContain('group_roles');
    }
    expect((await ownerConnection()('users').where({ id: memberId }).first('role')).role).toBe('member');
    expect(await ownerConnection()('events').where({ tenant_id: d.id, action: 'member.role_changed', target_id: memberId })).toEqual([]);
    // The role they hold: nothing to change, 200.
    const same = await request(t.app).patch(`/api/tenant/members/${memberId}`).set('Authorization', d.admin).send({ role: 'member' }).expect(200);
    expect(same.body).toMatchObject({ user_id: memberId, role: 'member', directory_managed: true, directory_active: true });
    // A member the directory does not manage: the admin sets their role.
    const plain = await request(t.app).patch(`/api/tenant/members/${d.memberId}`).set('Authorization', d.admin).send({ role: 'admin' }).expect(200);
    expect(plain.body).toMatchObject({ user_id: d.memberId, role: 'admin', directory_managed: false, directory_active: null });
  });
});
