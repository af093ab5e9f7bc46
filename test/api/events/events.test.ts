/**
 * The audit log (docs/events.md#events-and-webhooks):
 * - every state-changing operation of openapi.yaml (POST/PUT/PATCH/DELETE under /api, read from
 *   the contract) writes its event — action, actor, target, tenant — in the request's own
 *   transaction; a write operation added to the contract without a case here fails the test;
 * - append-only at the database level: the runtime role cannot UPDATE or DELETE an event, the
 *   owner cannot UPDATE one nor DELETE outside the retention purge;
 * - a tenant admin of A never sees B's events through the API; platform admins see all;
 * - events of a deleted tenant stay.
 */
import request from 'supertest';
import type { Knex } from 'knex';
import { LOCAL_ISSUER } from '../../../src/auth/local-keys';
import { openDatabase } from '../../../src/db/database';
import { purgeExpired } from '../../../src/db/queries/retention';
import { withTenant } from '../../../src/db/tenant-scope';
import { loadOpenApiDocument } from '../../../src/openapi-document';
import { startTestApp, testDatabaseUrl, type TestApp } from '../../helpers/app';
import { startDnsServer, type DnsServer } from '../../helpers/dns-server';
import { clientEventCases } from './client-event-cases';
import { domainEventCases, type Expected } from './domain-event-cases';
import { ssoEventCases } from '../sso/sso-event-cases';
import { adminToken, closeOwnerConnection, createTenant, createUser, ownerConnection, tenantWithMember, tokenFor, unique } from '../../helpers/factories';

let t: TestApp;
let dns: DnsServer;
const adminSub = unique('events-admin');
const admin = `Bearer ${adminToken(adminSub)}`;

beforeAll(async () => {
  dns = await startDnsServer();
  t = await startTestApp({ SERVICE_MULTI_TENANT_MODE: 'true', SERVICE_DNS_SERVERS: dns.address, SERVICE_PUBLIC_URL: 'https://tenants.example.com' }, { poolMax: 6 });
});
afterAll(async () => {
  await t.close();
  await dns.close();
  await closeOwnerConnection();
});

interface StoredEvent {
  id: string;
  action: string;
  tenant_id: string | null;
  actor_issuer: string | null;
  actor_subject: string | null;
  actor_email: string | null;
  actor_platform_admin: boolean;
  target_type: string;
  target_id: string | null;
  request_id: string | null;
  ip: string | null;
  data: Record<string, unknown>;
}

/** The events written by one request (by its X-Request-Id), read as the owner. */
async function eventsOf(res: request.Response): Promise<StoredEvent[]> {
  const requestId = res.headers['x-request-id'] as string;
  expect(requestId).toBeTruthy();
  return (await ownerConnection()('events').where({ request_id: requestId }).orderBy('occurred_at')) as StoredEvent[];
}

const WRITE_METHODS = ['post', 'put', 'patch', 'delete'];

/** Every state-changing /api operation of the contract. */
function writeOperations(): string[] {
  const doc = loadOpenApiDocument() as { paths: Record<string, Record<string, { operationId?: string }>> };
  const ids: string[] = [];
  for (const [p, item] of Object.entries(doc.paths)) {
    if (!p.startsWith('/api/')) continue;
    for (const m of WRITE_METHODS) if (item[m]?.operationId) ids.push(item[m]!.operationId!);
  }
  return ids.sort();
}

/** A catalogue permission of its own (keys are platform-wide). */
async function newPermission(): Promise<string> {
  const key = `${unique('ev').replace('-', '')}:write`;
  await request(t.app).post('/api/setup/permissions').set('Authorization', admin).send({ key }).expect(201);
  return key;
}

async function newWebhook(): Promise<string> {
  const r = await request(t.app).post('/api/setup/webhooks').set('Authorization', admin).send({ url: 'http://192.0.2.1:9/hook', events: ['tenant.*'], enabled: false });
  expect(r.status).toBe(201);
  return r.body.webhook_id as string;
}

/** One case per write operation: performs it and says which event it must have written. */
async function invite(): Promise<{ tenant: { id: string; slug: string }; admin: { subject: string }; headers: Record<string, string>; id: string; token: string; email: string }> {
  const { tenant, user, token } = await tenantWithMember('admin');
  const headers = { Authorization: `Bearer ${token}`, 'X-Tenant': tenant.slug };
  const email = `${unique('invitee')}@acme-corp.test`;
  const r = await request(t.app).post('/api/tenant/invitations').set(headers).send({ email, role: 'member' });
  expect(r.status).toBe(201);
  return { tenant, admin: user, headers, id: r.body.invitation_id, token: r.body.token, email };
}

const CASES: Record<string, () => Promise<Expected>> = {
  async createInvitation() {
    const { tenant, user, token } = await tenantWithMember('admin');
    const res = await request(t.app)
      .post('/api/tenant/invitations')
      .set({ Authorization: `Bearer ${token}`, 'X-Tenant': tenant.slug })
      .send({ email: `${unique('inv')}@acme-corp.test`, role: 'member' });
    return { res, status: 201, action: 'invitation.created', actor: { subject: user.subject, platformAdmin: false }, target: { type: 'invitation', id: res.body.invitation_id }, tenantId: tenant.id };
  },
  async resendInvitation() {
    const i = await invite();
    const res = await request(t.app).post(`/api/tenant/invitations/${i.id}/resend`).set(i.headers);
    return { res, status: 200, action: 'invitation.resent', actor: { subject: i.admin.subject, platformAdmin: false }, target: { type: 'invitation', id: i.id }, tenantId: i.tenant.id };
  },
  async revokeInvitation() {
    const i = await invite();
    const res = await request(t.app).delete(`/api/tenant/invitations/${i.id}`).set(i.headers);
    return { res, status: 200, action: 'invitation.revoked', actor: { subject: i.admin.subject, platformAdmin: false }, target: { type: 'invitation', id: i.id }, tenantId: i.tenant.id };
  },
  async acceptInvitation() {
    const i = await invite();
    const sub = unique('joiner');
    const res = await request(t.app)
      .post('/api/invitations/accept')
      .set('Authorization', `Bearer ${tokenFor({ sub, email: i.email })}`)
      .send({ token: i.token });
    return { res, status: 200, action: 'invitation.accepted', also: ['member.added'], actor: { subject: sub, platformAdmin: false }, target: { type: 'invitation', id: i.id }, tenantId: i.tenant.id };
  },
  async updateMemberRole() {
    const { tenant, user, token } = await tenantWithMember('admin');
    const other = await createUser(tenant.id);
    const res = await request(t.app).patch(`/api/tenant/members/${other.id}`).set({ Authorization: `Bearer ${token}`, 'X-Tenant': tenant.slug }).send({ role: 'admin' });
    return { res, status: 200, action: 'member.role_changed', actor: { subject: user.subject, platformAdmin: false }, target: { type: 'member', id: other.id }, tenantId: tenant.id };
  },
  async createTenant() {
    const res = await request(t.app).post('/api/setup/tenant').set('Authorization', admin).send({ name: 'Evented', slug: unique('ev') });
    return { res, status: 201, action: 'tenant.created', actor: { subject: adminSub, platformAdmin: true }, target: { type: 'tenant', id: res.body.tenant_id }, tenantId: res.body.tenant_id };
  },
  async updateTenant() {
    const tenant = await createTenant();
    const res = await request(t.app).put(`/api/setup/tenant/${tenant.id}`).set('Authorization', admin).send({ name: 'Renamed' });
    return { res, status: 200, action: 'tenant.updated', actor: { subject: adminSub, platformAdmin: true }, target: { type: 'tenant', id: tenant.id }, tenantId: tenant.id };
  },
  async deleteTenant() {
    const tenant = await createTenant();
    const res = await request(t.app).delete(`/api/setup/tenant/${tenant.id}`).set('Authorization', admin);
    // The intent is recorded before the first batch, the deletion with the tenant row.
    return { res, status: 200, action: 'tenant.deleted', also: ['tenant.deletion_started'], actor: { subject: adminSub, platformAdmin: true }, target: { type: 'tenant', id: tenant.id }, tenantId: tenant.id };
  },
  async suspendTenant() {
    const tenant = await createTenant();
    const res = await request(t.app).post(`/api/setup/tenant/${tenant.id}/suspend`).set('Authorization', admin).send({ reason: 'Unpaid' });
    return { res, status: 200, action: 'tenant.suspended', actor: { subject: adminSub, platformAdmin: true }, target: { type: 'tenant', id: tenant.id }, tenantId: tenant.id };
  },
  async reactivateTenant() {
    const tenant = await createTenant();
    await request(t.app).post(`/api/setup/tenant/${tenant.id}/suspend`).set('Authorization', admin).send({ reason: 'Unpaid' }).expect(200);
    const res = await request(t.app).post(`/api/setup/tenant/${tenant.id}/reactivate`).set('Authorization', admin);
    return { res, status: 200, action: 'tenant.reactivated', actor: { subject: adminSub, platformAdmin: true }, target: { type: 'tenant', id: tenant.id }, tenantId: tenant.id };
  },
  async scheduleTenantDeletion() {
    const tenant = await createTenant();
    const res = await request(t.app).post(`/api/setup/tenant/${tenant.id}/scheduled-deletion`).set('Authorization', admin).send({ grace_days: 3 });
    return { res, status: 200, action: 'tenant.deletion_scheduled', actor: { subject: adminSub, platformAdmin: true }, target: { type: 'tenant', id: tenant.id }, tenantId: tenant.id };
  },
  async cancelTenantDeletion() {
    const tenant = await createTenant();
    await request(t.app).post(`/api/setup/tenant/${tenant.id}/scheduled-deletion`).set('Authorization', admin).send({}).expect(200);
    const res = await request(t.app).delete(`/api/setup/tenant/${tenant.id}/scheduled-deletion`).set('Authorization', admin);
    return { res, status: 200, action: 'tenant.deletion_cancelled', actor: { subject: adminSub, platformAdmin: true }, target: { type: 'tenant', id: tenant.id }, tenantId: tenant.id };
  },
  async importTenant() {
    // Exported, deleted, then restored on the same deployment (its old events are still there).
    const tenant = await createTenant();
    const file = await request(t.app)
      .get(`/api/setup/tenant/${tenant.id}/export`)
      .set('Authorization', admin)
      .buffer(true)
      .parse((r, cb) => {
        let data = '';
        r.on('data', (c: Buffer) => (data += c.toString('utf8')));
        r.on('end', () => cb(null, data));
      })
      .expect(200);
    await request(t.app).delete(`/api/setup/tenant/${tenant.id}`).set('Authorization', admin).expect(200);
    const res = await request(t.app).post('/api/setup/tenants/import').set('Authorization', admin).set('Content-Type', 'application/x-ndjson').send(file.body as string);
    return { res, status: 201, action: 'tenant.imported', actor: { subject: adminSub, platformAdmin: true }, target: { type: 'tenant', id: tenant.id }, tenantId: tenant.id };
  },
  async registerTenant() {
    const sub = unique('founder');
    const res = await request(t.app)
      .post('/api/tenants/register')
      .set('Authorization', `Bearer ${tokenFor({ sub, email: `${sub}@acme-corp.test` })}`)
      .send({ organization_name: 'Event Co', admin_email: `${sub}@acme-corp.test`, include_sample_data: false });
    return { res, status: 201, action: 'tenant.registered', actor: { subject: sub, platformAdmin: false }, target: { type: 'tenant', id: res.body.tenant_id }, tenantId: res.body.tenant_id };
  },
  async addMember() {
    // Direct adds are the platform admin's (docs/tenants.md#membership); tenant admins invite.
    const { tenant } = await tenantWithMember('admin');
    const res = await request(t.app)
      .post('/api/tenant/members')
      .set('Authorization', `Bearer ${adminToken(adminSub)}`)
      .set('X-Tenant', tenant.slug)
      .send({ subject: unique('new'), issuer: LOCAL_ISSUER, email: 'new@acme-corp.test', role: 'member' });
    return { res, status: 201, action: 'member.added', actor: { subject: adminSub, platformAdmin: true }, target: { type: 'member', id: res.body.user_id }, tenantId: tenant.id };
  },
  async removeMember() {
    const { tenant, user, token } = await tenantWithMember('admin');
    const other = await createUser(tenant.id);
    const res = await request(t.app).delete(`/api/tenant/members/${other.id}`).set('Authorization', `Bearer ${token}`).set('X-Tenant', tenant.slug);
    return { res, status: 204, action: 'member.removed', actor: { subject: user.subject, platformAdmin: false }, target: { type: 'member', id: other.id }, tenantId: tenant.id };
  },
  async leaveTenant() {
    const { tenant, user, token } = await tenantWithMember('member');
    const res = await request(t.app).delete('/api/tenant/membership').set('Authorization', `Bearer ${token}`).set('X-Tenant', tenant.slug);
    return { res, status: 200, action: 'member.left', actor: { subject: user.subject, platformAdmin: false }, target: { type: 'member', id: user.id }, tenantId: tenant.id };
  },
  async createBoard() {
    const { tenant, user, token } = await tenantWithMember('member');
    const res = await request(t.app).post('/api/boards').set('Authorization', `Bearer ${token}`).set('X-Tenant', tenant.slug).send({ name: 'Evented board' });
    return { res, status: 201, action: 'board.created', actor: { subject: user.subject, platformAdmin: false }, target: { type: 'board', id: res.body.board_id }, tenantId: tenant.id };
  },
  // Minting a tenant token changes nothing but what entering the tenant may: here, a caller provisioned from its claim.
  async issueTenantToken() {
    const tenant = await createTenant();
    const sub = unique('claimed-token');
    const res = await request(t.app).post('/api/tenant/token').set('Authorization', `Bearer ${tokenFor({ sub, claims: { tenant: tenant.slug } })}`);
    const userId = JSON.parse(Buffer.from(String(res.body.access_token).split('.')[1]!, 'base64url').toString('utf8')).user_id as string;
    return { res, status: 200, action: 'member.provisioned', actor: { subject: sub, platformAdmin: false }, target: { type: 'member', id: userId }, tenantId: tenant.id };
  },
  async rotateTenantTokenKeys() {
    const res = await request(t.app).post('/api/setup/tenant-token-keys/rotate').set('Authorization', admin);
    return { res, status: 200, action: 'tenant_token.key_rotated', actor: { subject: adminSub, platformAdmin: true }, target: { type: 'tenant_token_key', id: res.body.kid }, tenantId: null };
  },
  async createConsoleCode() {
    const sub = unique('signin');
    const res = await request(t.app).post('/api/console/codes').set('Authorization', `Bearer ${tokenFor({ sub })}`);
    const [row] = await ownerConnection()('console_sign_in_codes').where({ subject: sub }).select('id');
    return { res, status: 201, action: 'sign_in_link.created', actor: { subject: sub, platformAdmin: false }, target: { type: 'sign_in_link', id: (row as { id: string }).id }, tenantId: null };
  },
  // The exchange carries no token: its actor is whom the link signs in.
  async createConsoleSession() {
    const sub = unique('signin');
    const made = await request(t.app).post('/api/console/codes').set('Authorization', `Bearer ${tokenFor({ sub, admin: true })}`).expect(201);
    const [row] = await ownerConnection()('console_sign_in_codes').where({ subject: sub }).select('id');
    const res = await request(t.app).post('/api/console/sessions').send({ code: made.body.code as string });
    return { res, status: 200, action: 'sign_in_link.redeemed', actor: { subject: sub, platformAdmin: true }, target: { type: 'sign_in_link', id: (row as { id: string }).id }, tenantId: null };
  },
  async createPermission() {
    const key = `${unique('ev').replace('-', '')}:read`;
    const res = await request(t.app).post('/api/setup/permissions').set('Authorization', admin).send({ key });
    return { res, status: 201, action: 'permission.created', actor: { subject: adminSub, platformAdmin: true }, target: { type: 'permission', id: key }, tenantId: null };
  },
  async deletePermission() {
    const key = await newPermission();
    const res = await request(t.app).delete(`/api/setup/permissions/${key}`).set('Authorization', admin);
    return { res, status: 200, action: 'permission.deleted', actor: { subject: adminSub, platformAdmin: true }, target: { type: 'permission', id: key }, tenantId: null };
  },
  async createPlatformRole() {
    const key = unique('evrole');
    const res = await request(t.app).post('/api/setup/roles').set('Authorization', admin).send({ key, name: 'Evented', permissions: [await newPermission()] });
    return { res, status: 201, action: 'role.created', actor: { subject: adminSub, platformAdmin: true }, target: { type: 'role', id: key }, tenantId: null };
  },
  async updatePlatformRole() {
    const key = unique('evrole');
    await request(t.app).post('/api/setup/roles').set('Authorization', admin).send({ key, name: 'Evented' }).expect(201);
    const res = await request(t.app).put(`/api/setup/roles/${key}`).set('Authorization', admin).send({ name: 'Renamed', permissions: [await newPermission()] });
    return { res, status: 200, action: 'role.updated', actor: { subject: adminSub, platformAdmin: true }, target: { type: 'role', id: key }, tenantId: null };
  },
  async deletePlatformRole() {
    const key = unique('evrole');
    await request(t.app).post('/api/setup/roles').set('Authorization', admin).send({ key, name: 'Evented' }).expect(201);
    const res = await request(t.app).delete(`/api/setup/roles/${key}`).set('Authorization', admin);
    return { res, status: 200, action: 'role.deleted', actor: { subject: adminSub, platformAdmin: true }, target: { type: 'role', id: key }, tenantId: null };
  },
  async createTenantRole() {
    const { tenant, user, token } = await tenantWithMember('admin');
    const key = unique('evrole');
    const res = await request(t.app).post('/api/tenant/roles').set({ Authorization: `Bearer ${token}`, 'X-Tenant': tenant.slug }).send({ key, name: 'Evented', permissions: [await newPermission()] });
    return { res, status: 201, action: 'role.created', actor: { subject: user.subject, platformAdmin: false }, target: { type: 'role', id: key }, tenantId: tenant.id };
  },
  async updateTenantRole() {
    const { tenant, user, token } = await tenantWithMember('admin');
    const key = unique('evrole');
    const auth = { Authorization: `Bearer ${token}`, 'X-Tenant': tenant.slug };
    await request(t.app).post('/api/tenant/roles').set(auth).send({ key, name: 'Evented' }).expect(201);
    const res = await request(t.app).put(`/api/tenant/roles/${key}`).set(auth).send({ name: 'Renamed', permissions: [] });
    return { res, status: 200, action: 'role.updated', actor: { subject: user.subject, platformAdmin: false }, target: { type: 'role', id: key }, tenantId: tenant.id };
  },
  async deleteTenantRole() {
    const { tenant, user, token } = await tenantWithMember('admin');
    const key = unique('evrole');
    const auth = { Authorization: `Bearer ${token}`, 'X-Tenant': tenant.slug };
    await request(t.app).post('/api/tenant/roles').set(auth).send({ key, name: 'Evented' }).expect(201);
    const res = await request(t.app).delete(`/api/tenant/roles/${key}`).set(auth);
    return { res, status: 200, action: 'role.deleted', actor: { subject: user.subject, platformAdmin: false }, target: { type: 'role', id: key }, tenantId: tenant.id };
  },
  async createScimToken() {
    const { tenant, user, token } = await tenantWithMember('admin');
    const res = await request(t.app).post('/api/tenant/scim/tokens').set({ Authorization: `Bearer ${token}`, 'X-Tenant': tenant.slug }).send({ description: 'Evented' });
    return { res, status: 201, action: 'scim_token.created', actor: { subject: user.subject, platformAdmin: false }, target: { type: 'scim_token', id: res.body.token_id }, tenantId: tenant.id };
  },
  async revokeScimToken() {
    const { tenant, user, token } = await tenantWithMember('admin');
    const auth = { Authorization: `Bearer ${token}`, 'X-Tenant': tenant.slug };
    const made = await request(t.app).post('/api/tenant/scim/tokens').set(auth).send({}).expect(201);
    const res = await request(t.app).delete(`/api/tenant/scim/tokens/${made.body.token_id}`).set(auth);
    return { res, status: 204, action: 'scim_token.revoked', actor: { subject: user.subject, platformAdmin: false }, target: { type: 'scim_token', id: made.body.token_id }, tenantId: tenant.id };
  },
  async updateScimSettings() {
    const { tenant, user, token } = await tenantWithMember('admin');
    const res = await request(t.app).put('/api/tenant/scim').set({ Authorization: `Bearer ${token}`, 'X-Tenant': tenant.slug }).send({ external_id_claim: 'oid' });
    return { res, status: 200, action: 'tenant.updated', actor: { subject: user.subject, platformAdmin: false }, target: { type: 'tenant', id: tenant.id }, tenantId: tenant.id };
  },
  async createWebhook() {
    const res = await request(t.app).post('/api/setup/webhooks').set('Authorization', admin).send({ url: 'http://192.0.2.1:9/hook', events: ['member.*'], enabled: false });
    return { res, status: 201, action: 'webhook.created', actor: { subject: adminSub, platformAdmin: true }, target: { type: 'webhook', id: res.body.webhook_id }, tenantId: null };
  },
  async updateWebhook() {
    const id = await newWebhook();
    const res = await request(t.app).put(`/api/setup/webhooks/${id}`).set('Authorization', admin).send({ description: 'renamed' });
    return { res, status: 200, action: 'webhook.updated', actor: { subject: adminSub, platformAdmin: true }, target: { type: 'webhook', id }, tenantId: null };
  },
  async deleteWebhook() {
    const id = await newWebhook();
    const res = await request(t.app).delete(`/api/setup/webhooks/${id}`).set('Authorization', admin);
    return { res, status: 204, action: 'webhook.deleted', actor: { subject: adminSub, platformAdmin: true }, target: { type: 'webhook', id }, tenantId: null };
  },
  ...domainEventCases({ t: () => t, dns: () => dns, admin, adminSub }),
  ...clientEventCases({ t: () => t, admin, adminSub }),
  ...ssoEventCases({ t: () => t }),
};

describe('every state-changing operation records its event', () => {
  it('has a case for every write operation of openapi.yaml (a new one without an event fails here)', () => {
    expect(Object.keys(CASES).sort()).toEqual(writeOperations());
  });

  it.each(writeOperations())('%s', async (operationId) => {
    const run = CASES[operationId];
    if (!run) throw new Error(`no event case for write operation ${operationId}: add one to CASES`);
    const e = await run();
    expect(e.res.status).toBe(e.status);
    const events = await eventsOf(e.res);
    expect(events.map((x) => x.action).sort()).toEqual([e.action, ...(e.also ?? [])].sort());
    const ev = events.find((x) => x.action === e.action);
    expect(ev).toMatchObject({
      action: e.action,
      tenant_id: e.tenantId,
      actor_issuer: LOCAL_ISSUER,
      actor_subject: e.actor.subject,
      actor_platform_admin: e.actor.platformAdmin,
      target_type: e.target.type,
      target_id: e.target.id,
    });
    expect(ev!.ip).toMatch(/127\.0\.0\.1|::1|::ffff:127\.0\.0\.1/);
    expect(JSON.stringify(ev!.data)).not.toMatch(/whsec_|"secret"|"token"/);
  });
});

describe('event details', () => {
  it('approving a pending tenant is tenant.approved; other changed fields are tenant.updated with before/after', async () => {
    const tenant = await createTenant({ status: 'pending_approval', name: 'Before' });
    const res = await request(t.app).put(`/api/setup/tenant/${tenant.id}`).set('Authorization', admin).send({ status: 'active', name: 'After' });
    expect(res.status).toBe(200);
    const events = await eventsOf(res);
    expect(events.map((e) => e.action).sort()).toEqual(['tenant.approved', 'tenant.updated']);
    const updated = events.find((e) => e.action === 'tenant.updated')!;
    expect(updated.data).toMatchObject({ before: { name: 'Before' }, after: { name: 'After' } });
    expect(updated.data.before).not.toHaveProperty('status');
    expect(events.find((e) => e.action === 'tenant.approved')!.data).toMatchObject({ before: { status: 'pending_approval' }, after: { status: 'active' } });
  });

  it('a caller provisioned from a tenant claim is member.provisioned, once', async () => {
    const tenant = await createTenant();
    const sub = unique('claimed');
    const token = tokenFor({ sub, claims: { tenant: tenant.slug } });
    const first = await request(t.app).get('/api/tenant').set('Authorization', `Bearer ${token}`).expect(200);
    const [ev] = await eventsOf(first);
    expect(ev).toMatchObject({ action: 'member.provisioned', tenant_id: tenant.id, actor_subject: sub, target_type: 'member', target_id: first.body.membership.user_id });
    const second = await request(t.app).get('/api/tenant').set('Authorization', `Bearer ${token}`).expect(200);
    expect(await eventsOf(second)).toEqual([]);
  });

  it('concurrent first requests of one claim-provisioned caller record member.provisioned once', async () => {
    const tenant = await createTenant();
    const sub = unique('claimed-race');
    const token = tokenFor({ sub, claims: { tenant: tenant.slug } });
    const answers = await Promise.all(Array.from({ length: 6 }, () => request(t.app).get('/api/tenant').set('Authorization', `Bearer ${token}`)));
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 200, 200]);
    const listed = await request(t.app)
      .get(`/api/setup/events?tenant_id=${tenant.id}&action=member.provisioned&actor_subject=${encodeURIComponent(sub)}`)
      .set('Authorization', admin)
      .expect(200);
    expect(listed.body.events).toHaveLength(1);
    expect(new Set(answers.map((a) => a.body.membership.user_id)).size).toBe(1);
  });

  it('a replayed create, a dry-run delete and a refused change record nothing', async () => {
    const slug = unique('idem');
    const body = { name: 'Idem', slug };
    const first = await request(t.app).post('/api/setup/tenant').set('Authorization', admin).set('Idempotency-Key', slug).send(body).expect(201);
    expect((await eventsOf(first)).length).toBe(1);
    const replay = await request(t.app).post('/api/setup/tenant').set('Authorization', admin).set('Idempotency-Key', slug).send(body).expect(200);
    expect(await eventsOf(replay)).toEqual([]);
    const dry = await request(t.app).delete(`/api/setup/tenant/${first.body.tenant_id}?dry_run=true`).set('Authorization', admin).expect(200);
    expect(await eventsOf(dry)).toEqual([]);
    const conflict = await request(t.app).post('/api/setup/tenant').set('Authorization', admin).send(body).expect(409);
    expect(await eventsOf(conflict)).toEqual([]);
  });

  it('events of a deleted tenant stay', async () => {
    const created = await request(t.app).post('/api/setup/tenant').set('Authorization', admin).send({ name: 'Doomed', slug: unique('doomed') }).expect(201);
    const id = created.body.tenant_id as string;
    await request(t.app).delete(`/api/setup/tenant/${id}`).set('Authorization', admin).expect(200);
    const r = await request(t.app).get(`/api/setup/events?tenant_id=${id}`).set('Authorization', admin).expect(200);
    expect(r.body.events.map((e: { action: string }) => e.action)).toEqual(['tenant.deleted', 'tenant.deletion_started', 'tenant.created']);
    expect(r.body.events[0]).toMatchObject({ actor: { subject: adminSub, platform_admin: true, issuer: LOCAL_ISSUER }, target: { type: 'tenant', id } });
  });
});

describe('reading events', () => {
  it("a tenant admin of A never sees B's events, nor platform-wide ones", async () => {
    const a = await tenantWithMember('admin');
    const b = await tenantWithMember('admin');
    const aHeaders = { Authorization: `Bearer ${a.token}`, 'X-Tenant': a.tenant.slug };
    const bHeaders = { Authorization: `Bearer ${b.token}`, 'X-Tenant': b.tenant.slug };
    await request(t.app).post('/api/boards').set(aHeaders).send({ name: 'A board' }).expect(201);
    await request(t.app).post('/api/boards').set(bHeaders).send({ name: 'B board' }).expect(201);
    await newWebhook();

    const seen = await request(t.app).get('/api/tenant/events?limit=1000').set(aHeaders).expect(200);
    expect(seen.body.events.length).toBeGreaterThan(0);
    expect(new Set(seen.body.events.map((e: { tenant_id: string }) => e.tenant_id))).toEqual(new Set([a.tenant.id]));
    // Filters cannot reach another tenant either: B's actor and B's action give nothing.
    const byB = await request(t.app).get(`/api/tenant/events?actor_subject=${b.user.subject}`).set(aHeaders).expect(200);
    expect(byB.body.events).toEqual([]);
    // A's admin naming B's tenant in the header is refused before any read.
    await request(t.app).get('/api/tenant/events').set({ Authorization: `Bearer ${a.token}`, 'X-Tenant': b.tenant.slug }).expect(403);
  });

  it('a member who is not an admin is refused', async () => {
    const m = await tenantWithMember('member');
    const r = await request(t.app).get('/api/tenant/events').set({ Authorization: `Bearer ${m.token}`, 'X-Tenant': m.tenant.slug });
    expect(r.status).toBe(403);
  });

  it('platform admins filter by tenant, action, actor and time, newest first, cursor paged', async () => {
    const { tenant, user, token } = await tenantWithMember('admin');
    const headers = { Authorization: `Bearer ${token}`, 'X-Tenant': tenant.slug };
    const since = new Date(Date.now() - 1000).toISOString();
    for (let i = 0; i < 5; i++) await request(t.app).post('/api/boards').set(headers).send({ name: `b${i}` }).expect(201);
    const all: Array<{ action: string; occurred_at: string; data: { board: { name: string } } }> = [];
    let cursor: string | null = null;
    do {
      const q: string = `/api/setup/events?tenant_id=${tenant.id}&action=board.created&actor_subject=${user.subject}&since=${encodeURIComponent(since)}&limit=2${cursor ? `&cursor=${cursor}` : ''}`;
      const r = await request(t.app).get(q).set('Authorization', admin).expect(200);
      all.push(...r.body.events);
      cursor = r.body.next_cursor;
    } while (cursor);
    expect(all.map((e) => e.data.board.name)).toEqual(['b4', 'b3', 'b2', 'b1', 'b0']);
    const until = await request(t.app).get(`/api/setup/events?tenant_id=${tenant.id}&until=${encodeURIComponent(since)}`).set('Authorization', admin).expect(200);
    expect(until.body.events).toEqual([]);
    await request(t.app).get('/api/setup/events?cursor=bm90LWEtY3Vyc29y').set('Authorization', admin).expect(400);
    await request(t.app).get('/api/setup/events').set('Authorization', `Bearer ${token}`).expect(403);
  });
});

describe('append-only in the database', () => {
  let runtime: Knex;
  let tenantId: string;
  beforeAll(async () => {
    runtime = openDatabase({ url: testDatabaseUrl(), poolMax: 2 });
    const { tenant, token } = await tenantWithMember('admin');
    tenantId = tenant.id;
    await request(t.app).post('/api/boards').set({ Authorization: `Bearer ${token}`, 'X-Tenant': tenant.slug }).send({ name: 'x' }).expect(201);
  });
  afterAll(async () => {
    await runtime.destroy();
  });

  it('the runtime role can neither UPDATE nor DELETE an event, even its own tenant', async () => {
    await expect(withTenant(runtime, tenantId, (trx) => trx('events').where({ tenant_id: tenantId }).update({ action: 'tenant.deleted' }))).rejects.toMatchObject({ code: '42501' });
    await expect(withTenant(runtime, tenantId, (trx) => trx('events').where({ tenant_id: tenantId }).delete())).rejects.toMatchObject({ code: '42501' });
    await expect(runtime.raw('truncate events')).rejects.toMatchObject({ code: '42501' });
    const left = await ownerConnection()('events').where({ tenant_id: tenantId, action: 'board.created' }).count({ n: '*' });
    expect(Number(left[0]!.n)).toBe(1);
  });

  it('the runtime role reads only the tenant it is in, and cannot insert into another', async () => {
    const other = await createTenant();
    const rows = await withTenant(runtime, tenantId, (trx) => trx('events').select('tenant_id'));
    expect(new Set(rows.map((r) => r.tenant_id))).toEqual(new Set([tenantId]));
    const none = await runtime.transaction((trx) => trx('events').select('id'));
    expect(none).toEqual([]);
    await expect(
      withTenant(runtime, tenantId, (trx) =>
        trx('events').insert({ id: '3f0e9a52-6a0b-4c1e-8f5e-1e2d3c4b5a69', occurred_at: new Date(), action: 'tenant.updated', tenant_id: other.id, target_type: 'tenant' }),
      ),
    ).rejects.toMatchObject({ code: '42501' });
  });

  it('the owner cannot UPDATE an event, nor DELETE one outside the retention purge', async () => {
    const owner = ownerConnection();
    await expect(owner('events').where({ tenant_id: tenantId }).update({ action: 'tenant.deleted' })).rejects.toThrow(/append-only/);
    await expect(owner('events').where({ tenant_id: tenantId }).delete()).rejects.toThrow(/append-only/);
    await expect(owner.raw('truncate events')).rejects.toThrow(/append-only/);
  });

  it('the retention purge (as the owner) deletes only events older than the retention period', async () => {
    const owner = ownerConnection();
    const old = '2f0e9a52-6a0b-4c1e-8f5e-1e2d3c4b5a69';
    await owner('events').insert({ id: old, occurred_at: new Date(Date.now() - 400 * 86_400_000), action: 'tenant.updated', tenant_id: tenantId, target_type: 'tenant' });
    const result = await purgeExpired(owner, { retentionDays: 365 });
    expect(result.ran).toBe(true);
    expect(result.events).toBeGreaterThanOrEqual(1);
    expect(await owner('events').where({ id: old }).first()).toBeUndefined();
    const recent = await owner('events').where({ tenant_id: tenantId }).count({ n: '*' });
    expect(Number(recent[0]!.n)).toBeGreaterThan(0);
  });
});
