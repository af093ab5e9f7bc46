/**
 * Nobody becomes a member without consent (docs/tenants.md#membership): direct adds are the
 * platform admin's, tenant admins invite, any member may leave, and an invitation dies with its
 * inviter's admin role. Emails compare trimmed and Unicode NFKC case-folded. Against the real
 * pipeline and database, including the attacker's scenario that motivated the rule.
 */
import request from 'supertest';
import type { Express } from 'express';
import { LOCAL_ISSUER } from '../../../src/auth/local-keys';
import { startTestApp, type TestApp } from '../../helpers/app';
import { adminToken, closeOwnerConnection, createTenant, createUser, ownerConnection, tokenFor, unique } from '../../helpers/factories';
import type { RoleKey } from '../../../src/context/roles';

jest.setTimeout(120_000);

let t: TestApp;
let app: Express;
beforeAll(async () => {
  t = await startTestApp({ SERVICE_MULTI_TENANT_MODE: 'true' }, { poolMax: 8 });
  app = t.app;
});
afterAll(async () => {
  await t.close();
  await closeOwnerConnection();
});

const bearer = (token: string) => `Bearer ${token}`;

interface Org {
  slug: string;
  tenantId: string;
  adminToken: string;
  adminSub: string;
  adminId: string;
}

/** A self-registered tenant (members join by invitation) and its admin. */
async function register(slug?: string): Promise<Org> {
  const adminSub = unique('boss');
  const token = tokenFor({ sub: adminSub, email: `${adminSub}@initech.test` });
  const r = await request(app)
    .post('/api/tenants/register')
    .set('Authorization', bearer(token))
    .send({ organization_name: `Org ${adminSub}`, ...(slug ? { organization_slug: slug } : {}), admin_email: `${adminSub}@initech.test`, include_sample_data: false })
    .expect(201);
  return { slug: r.body.tenant_slug, tenantId: r.body.tenant_id, adminToken: token, adminSub, adminId: await userId(r.body.tenant_id, adminSub) };
}

async function userId(tenantId: string, subject: string): Promise<string> {
  return ((await ownerConnection()('users').where({ tenant_id: tenantId, subject }).first('id')) as { id: string }).id;
}

/** A second admin of `o`, made through the API (invited and accepted). */
async function secondAdmin(o: Org): Promise<{ sub: string; token: string; id: string }> {
  const sub = unique('admin2');
  const email = `${sub}@initech.test`;
  const inv = await invite(o, email, 'admin').expect(201);
  const token = tokenFor({ sub, email });
  const r = await accept(token, inv.body.token).expect(200);
  return { sub, token, id: r.body.membership.user_id };
}

function invite(o: Org, email: string, role: RoleKey = 'member', token = o.adminToken) {
  return request(app).post('/api/tenant/invitations').set('Authorization', bearer(token)).set('X-Tenant', o.slug).send({ email, role });
}

function accept(token: string, invitationToken: string) {
  return request(app).post('/api/invitations/accept').set('Authorization', bearer(token)).send({ token: invitationToken });
}

const invitationRow = (id: string) => ownerConnection()('invitations').where({ id }).first();
const eventsOf = (tenantId: string, action: string) => ownerConnection()('events').where({ tenant_id: tenantId, action }).orderBy('occurred_at').select('target_id', 'data');

describe("the attacker's scenario: a tenant named after the victim's email domain", () => {
  it('cannot pull the victim in; the victim’s tenant-less requests do not land there; the victim can leave', async () => {
    const label = unique('globex').replace(/-/g, '');
    const victimSub = unique('victim');
    const victimEmail = `ceo@${label}.com`;
    const victimToken = tokenFor({ sub: victimSub, claims: { email: victimEmail, email_verified: true } });
    const victim = bearer(victimToken);

    // The attacker registers the victim's domain label as a slug, and is its admin.
    const attacker = await register(label);
    expect(attacker.slug).toBe(label);

    // Adding the victim directly, by issuer and subject, is refused and changes nothing.
    const added = await request(app)
      .post('/api/tenant/members')
      .set('Authorization', bearer(attacker.adminToken))
      .set('X-Tenant', label)
      .send({ issuer: LOCAL_ISSUER, subject: victimSub, email: victimEmail, role: 'member' })
      .expect(403);
    expect(added.body.error).toBe('Forbidden');
    expect(added.body.detail).toContain('Only platform admins');
    expect(await ownerConnection()('users').where({ tenant_id: attacker.tenantId, subject: victimSub })).toHaveLength(0);

    // The victim's requests without X-Tenant never land in the attacker's tenant.
    const current = await request(app).get('/api/tenant').set('Authorization', victim);
    expect(current.status).toBeGreaterThanOrEqual(400);
    expect(current.status).toBeLessThan(500);
    expect(JSON.stringify(current.body)).not.toContain(attacker.tenantId);
    const board = await request(app).post('/api/boards').set('Authorization', victim).send({ name: 'Q3 acquisition plan' });
    expect(board.status).toBeGreaterThanOrEqual(400);
    expect(board.status).toBeLessThan(500);
    const seen = await request(app).get('/api/boards').set('Authorization', bearer(attacker.adminToken)).set('X-Tenant', label).expect(200);
    expect(JSON.stringify(seen.body)).not.toContain('Q3 acquisition plan');
    expect(await ownerConnection()('boards').where({ name: 'Q3 acquisition plan' })).toHaveLength(0);

    // Even a victim who accepted an invitation there can leave, and is then out.
    const inv = await invite(attacker, victimEmail).expect(201);
    await accept(victimToken, inv.body.token).expect(200);
    const left = await request(app).delete('/api/tenant/membership').set('Authorization', victim).set('X-Tenant', label).expect(200);
    expect(left.body).toMatchObject({ tenant_id: attacker.tenantId, tenant_slug: label, membership: { subject: victimSub, role: 'member' }, revoked_invitations: 0 });
    await request(app).get('/api/tenant').set('Authorization', victim).set('X-Tenant', label).expect(403);
    const afterLeaving = await request(app).get('/api/tenant').set('Authorization', victim);
    expect(afterLeaving.status).toBeGreaterThanOrEqual(400);
    expect(afterLeaving.status).toBeLessThan(500);
    expect(await ownerConnection()('users').where({ tenant_id: attacker.tenantId, subject: victimSub })).toHaveLength(0);
    const [ev] = await eventsOf(attacker.tenantId, 'member.left');
    expect(ev).toMatchObject({ target_id: left.body.membership.user_id });
  });
});

describe('POST /api/tenant/members is for platform admins (x-access tenantPlatformAdmin)', () => {
  it('a tenant admin and a member get 403 Forbidden; a platform admin who is not a member adds (201)', async () => {
    const tenant = await createTenant();
    const admin = await createUser(tenant.id, { role: 'admin' });
    const member = await createUser(tenant.id);
    const body = { subject: unique('direct'), email: 'direct@example.test', role: 'member' };
    const as = (token: string) => request(app).post('/api/tenant/members').set('Authorization', bearer(token)).set('X-Tenant', tenant.slug).send(body);
    for (const u of [admin, member]) {
      const r = await as(tokenFor({ sub: u.subject })).expect(403);
      expect(r.body).toMatchObject({ error: 'Forbidden' });
    }
    expect(await ownerConnection()('users').where({ tenant_id: tenant.id, subject: body.subject })).toHaveLength(0);
    const r = await as(adminToken()).expect(201);
    expect(r.body).toMatchObject({ subject: body.subject, role: 'member' });
    // A stranger to the tenant is refused at the door, as before.
    const stranger = await as(tokenFor()).expect(403);
    expect(stranger.body.error).toBe('Access denied');
  });

  it('x-access says so in openapi.yaml and in the rendered description', async () => {
    const doc = await request(app).get('/openapi.json').expect(200);
    const op = doc.body.paths['/api/tenant/members'].post;
    expect(op['x-access']).toBe('tenantPlatformAdmin');
    expect(op.description).toContain('platform admins only');
  });
});

describe('DELETE /api/tenant/membership (leaveTenant)', () => {
  it('a member leaves (200): the membership ends, the next request is 403', async () => {
    const tenant = await createTenant();
    await createUser(tenant.id, { role: 'admin' });
    const m = await createUser(tenant.id);
    const token = bearer(tokenFor({ sub: m.subject }));
    const r = await request(app).delete('/api/tenant/membership').set('Authorization', token).set('X-Tenant', tenant.slug).expect(200);
    expect(r.body).toEqual({
      tenant_id: tenant.id,
      tenant_slug: tenant.slug,
      membership: expect.objectContaining({ user_id: m.id, subject: m.subject, role: 'member' }),
      revoked_invitations: 0,
    });
    const again = await request(app).get('/api/tenant').set('Authorization', token).set('X-Tenant', tenant.slug).expect(403);
    expect(again.body.error).toBe('Access denied');
  });

  it('the last admin cannot leave (409, saying to make another member admin first); changes nothing', async () => {
    const tenant = await createTenant();
    const admin = await createUser(tenant.id, { role: 'admin' });
    await createUser(tenant.id);
    const r = await request(app).delete('/api/tenant/membership').set('Authorization', bearer(tokenFor({ sub: admin.subject }))).set('X-Tenant', tenant.slug).expect(409);
    expect(r.body.error).toBe('Conflict');
    expect(r.body.detail).toMatch(/last admin/);
    expect(r.body.detail).toMatch(/make another member admin first/);
    expect(await ownerConnection()('users').where({ tenant_id: tenant.id, id: admin.id })).toHaveLength(1);
    expect(await eventsOf(tenant.id, 'member.left')).toHaveLength(0);
  });

  it('an admin who leaves (another admin remains) revokes the invitations they sent', async () => {
    const o = await register();
    const b = await secondAdmin(o);
    const mine = await invite(o, `${unique('x')}@initech.test`, 'admin').expect(201);
    const theirs = await invite(o, `${unique('y')}@initech.test`, 'member', b.token).expect(201);
    const r = await request(app).delete('/api/tenant/membership').set('Authorization', bearer(o.adminToken)).set('X-Tenant', o.slug).expect(200);
    expect(r.body.revoked_invitations).toBe(1);
    expect(r.body.membership).toMatchObject({ user_id: o.adminId, role: 'admin' });
    expect((await invitationRow(mine.body.invitation_id)).status).toBe('revoked');
    expect((await invitationRow(theirs.body.invitation_id)).status).toBe('pending');
    const revoked = await eventsOf(o.tenantId, 'invitation.revoked');
    expect(revoked).toEqual([expect.objectContaining({ target_id: mine.body.invitation_id, data: expect.objectContaining({ reason: 'inviter_no_longer_admin' }) })]);
    await accept(tokenFor({ email: mine.body.email }), mine.body.token).expect(404);
  });

  it('a platform admin who is not a member has nothing to leave (404 Not found)', async () => {
    const tenant = await createTenant();
    await createUser(tenant.id, { role: 'admin' });
    const r = await request(app).delete('/api/tenant/membership').set('Authorization', bearer(adminToken())).set('X-Tenant', tenant.slug).expect(404);
    expect(r.body.error).toBe('Not found');
  });

  it('a stranger to the tenant gets 403 Access denied', async () => {
    const tenant = await createTenant();
    await request(app).delete('/api/tenant/membership').set('Authorization', bearer(tokenFor())).set('X-Tenant', tenant.slug).expect(403);
  });
});

describe("an invitation dies with its inviter's admin role", () => {
  for (const how of ['removed', 'demoted'] as const) {
    it(`inviter ${how}: accept is 404 Invitation not found; the invitation reads revoked, with its event`, async () => {
      const o = await register();
      const b = await secondAdmin(o);
      const email = `${unique('heir')}@initech.test`;
      const inv = await invite(o, email, 'admin').expect(201);
      const change =
        how === 'removed'
          ? request(app).delete(`/api/tenant/members/${o.adminId}`).set('Authorization', bearer(b.token)).set('X-Tenant', o.slug).expect(204)
          : request(app).patch(`/api/tenant/members/${o.adminId}`).set('Authorization', bearer(b.token)).set('X-Tenant', o.slug).send({ role: 'member' }).expect(200);
      await change;
      const r = await accept(tokenFor({ sub: unique('heir'), email }), inv.body.token).expect(404);
      expect(r.body.error).toBe('Invitation not found');
      expect(await ownerConnection()('users').where({ tenant_id: o.tenantId, email })).toHaveLength(0);
      const list = await request(app).get('/api/tenant/invitations').set('Authorization', bearer(b.token)).set('X-Tenant', o.slug).expect(200);
      const listed = list.body.invitations.find((i: { invitation_id: string }) => i.invitation_id === inv.body.invitation_id);
      expect(listed).toMatchObject({ status: 'revoked' });
      expect(listed.revoked_at).not.toBeNull();
      const revoked = await eventsOf(o.tenantId, 'invitation.revoked');
      expect(revoked.map((e: { target_id: string }) => e.target_id)).toEqual([inv.body.invitation_id]);
      // The other admin's invitations are untouched.
      await invite(o, `${unique('later')}@initech.test`, 'member', b.token).expect(201);
    });
  }

  it("an invitation whose inviter lost the role without the API (data from before the rule) is revoked when accepted", async () => {
    const o = await register();
    const email = `${unique('old')}@initech.test`;
    const inv = await invite(o, email, 'admin').expect(201);
    await ownerConnection()('users').where({ tenant_id: o.tenantId, id: o.adminId }).update({ role: 'member' });
    await accept(tokenFor({ email }), inv.body.token).expect(404);
    expect(await invitationRow(inv.body.invitation_id)).toMatchObject({ status: 'revoked' });
    expect((await eventsOf(o.tenantId, 'invitation.revoked')).map((e: { target_id: string }) => e.target_id)).toEqual([inv.body.invitation_id]);
  });

  it('inviting while being demoted: never a pending invitation of a non-admin (repeated rounds)', async () => {
    for (let round = 0; round < 6; round += 1) {
      const o = await register();
      const b = await secondAdmin(o);
      const [created, demoted] = await Promise.all([
        invite(o, `${unique('race')}@initech.test`, 'admin'),
        request(app).patch(`/api/tenant/members/${o.adminId}`).set('Authorization', bearer(b.token)).set('X-Tenant', o.slug).send({ role: 'member' }),
      ]);
      expect(demoted.status).toBe(200);
      expect([201, 403]).toContain(created.status);
      const pendingOfA = await ownerConnection()('invitations').where({ tenant_id: o.tenantId, invited_by: o.adminId, status: 'pending' });
      expect(pendingOfA).toEqual([]);
    }
  });
});

describe('emails compare trimmed and NFKC case-folded, and are stored trimmed', () => {
  it('an email claim with a tab and spaces is accepted, stored trimmed, and blocks a second invitation of the address (409)', async () => {
    const o = await register();
    const local = unique('bob');
    const inv = await invite(o, `${local}@initech.test`).expect(201);
    const claim = `  ${local.toUpperCase()}@Initech.TEST\t`;
    const r = await accept(tokenFor({ sub: unique('bob'), claims: { email: claim, email_verified: true } }), inv.body.token).expect(200);
    expect(r.body.membership.email).toBe(`${local.toUpperCase()}@Initech.TEST`);
    const stored = await ownerConnection()('users').where({ tenant_id: o.tenantId, id: r.body.membership.user_id }).first('email');
    expect(stored.email).toBe(`${local.toUpperCase()}@Initech.TEST`);
    const again = await invite(o, `${local}@initech.test`).expect(409);
    expect(again.body.detail).toMatch(/already has the email/);
    expect(await ownerConnection()('invitations').where({ tenant_id: o.tenantId })).toHaveLength(1);
  });

  it('a member stored with surrounding white space (before this rule) still blocks an invitation of the address', async () => {
    const o = await register();
    const local = `fx0B${unique('v').slice(2)}`;
    await createUser(o.tenantId, { email: `\t ${local}@initech.test\r\n` });
    const r = await invite(o, `${local.toLowerCase()}@initech.test`).expect(409);
    expect(r.body.detail).toMatch(/already has the email/);
    // Only white space is trimmed: a shorter address is another one.
    await invite(o, `${local.slice(1)}@initech.test`).expect(201);
  });

  it('a compatibility form of the address (fullwidth letters) is the same address', async () => {
    const o = await register();
    const inv = await invite(o, 'ann@initech.test').expect(201);
    const fullwidth = 'ＡＮＮ@initech.test';
    const r = await accept(tokenFor({ sub: unique('ann'), claims: { email: fullwidth, email_verified: true } }), inv.body.token).expect(200);
    expect(r.body.membership.email).toBe(fullwidth);
    await invite(o, 'Ann@Initech.test').expect(409);
  });

  it('a second invitation of the same address in another case is 409; with surrounding white space it is refused by the contract (400); one pending invitation remains', async () => {
    const o = await register();
    const local = unique('carol');
    await invite(o, `${local}@initech.test`).expect(201);
    const r = await invite(o, `${local.toUpperCase()}@INITECH.test`).expect(409);
    expect(r.body.error).toBe('Conflict');
    for (const variant of [` ${local}@initech.test`, `${local}@initech.test\t`]) {
      const v = await invite(o, variant).expect(400);
      expect(v.body.error).toBe('Validation error');
    }
    expect(await ownerConnection()('invitations').where({ tenant_id: o.tenantId, status: 'pending' })).toHaveLength(1);
  });
});
