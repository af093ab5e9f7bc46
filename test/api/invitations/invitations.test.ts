/**
 * Invitations (docs/tenants.md#invitations-and-membership-in-detail) end to end against the running
 * API, with real mail to a real SMTP server started here: the journey (invite → mail → accept → use
 * the tenant → listed as accepted) and every refusal with its status, Error body and no change.
 */
import net from 'node:net';
import request from 'supertest';
import { hashInvitationToken } from '../../../src/domain/invitations';
import type { Express } from 'express';
import { startTestApp, type TestApp } from '../../helpers/app';
import { startSmtpSink, type SmtpSink } from '../../helpers/smtp-sink';
import { closeOwnerConnection, createUser, ownerConnection, tokenFor, unique } from '../../helpers/factories';

const FRONTEND = 'https://app.example.com/console';

let smtp: SmtpSink;
let app: TestApp; // multi-tenant, SMTP and frontend configured
let plain: TestApp; // multi-tenant, no SMTP, no frontend
let broken: TestApp; // SMTP pointing at a closed port
let limited: TestApp; // rate limits on

beforeAll(async () => {
  smtp = await startSmtpSink();
  const base = { SERVICE_MULTI_TENANT_MODE: 'true' };
  app = await startTestApp({ ...base, SERVICE_SMTP_URL: smtp.url, SERVICE_MAIL_FROM: 'Tenant Service <tenants@service.test>', SERVICE_FRONTEND_BASE_URL: FRONTEND });
  plain = await startTestApp(base);
  broken = await startTestApp({ ...base, SERVICE_SMTP_URL: 'smtp://127.0.0.1:1', SERVICE_MAIL_FROM: 'tenants@service.test' });
  limited = await startTestApp({ ...base, SERVICE_RATE_LIMIT_ENABLED: 'true' });
});
afterAll(async () => {
  await Promise.all([app, plain, broken, limited].map((a) => a?.close()));
  await smtp?.close();
  await closeOwnerConnection();
});

interface Org {
  slug: string;
  tenantId: string;
  adminToken: string;
  adminSub: string;
}

/** A self-registered tenant (members join by invitation) and its admin's token. */
async function org(target: Express = app.app, name = 'Initech'): Promise<Org> {
  const adminSub = unique('boss');
  const adminToken = tokenFor({ sub: adminSub, email: `${adminSub}@initech.test`, name: 'Bill Lumbergh' });
  const r = await request(target)
    .post('/api/tenants/register')
    .set('Authorization', `Bearer ${adminToken}`)
    .send({ organization_name: `${name} ${adminSub}`, admin_email: `${adminSub}@initech.test`, include_sample_data: false })
    .expect(201);
  return { slug: r.body.tenant_slug, tenantId: r.body.tenant_id, adminToken, adminSub };
}

function invite(target: Express, o: Org, body: Record<string, unknown>, token = o.adminToken) {
  return request(target).post('/api/tenant/invitations').set('Authorization', `Bearer ${token}`).set('X-Tenant', o.slug).send(body);
}

function accept(target: Express, token: string, invitationToken: string) {
  return request(target).post('/api/invitations/accept').set('Authorization', `Bearer ${token}`).send({ token: invitationToken });
}

const usersOf = (tenantId: string) => ownerConnection()('users').where({ tenant_id: tenantId }).select('subject', 'email', 'role');
const invitationRow = (id: string) => ownerConnection()('invitations').where({ id }).first();

describe('the invitation journey with real mail', () => {
  it('invite → mail arrives → the invitee accepts → uses the tenant → listed as accepted', async () => {
    const o = await org();
    const email = `${unique('peter')}@initech.test`;
    const created = await invite(app.app, o, { email, role: 'member' }).expect(201);
    expect(created.body).toMatchObject({ email, role: 'member', status: 'pending', delivery: 'sent', tenant_id: o.tenantId });
    expect(created.body.invited_by.email).toBe(`${o.adminSub}@initech.test`);
    expect(created.body.token).toMatch(/^inv_/);
    expect(created.body.accept_url).toBe(`${FRONTEND}/invitations/accept?token=${created.body.token}`);
    const hours = (Date.parse(created.body.expires_at) - Date.parse(created.body.created_at)) / 3_600_000;
    expect(Math.round(hours)).toBe(168);

    // Only the hash is stored.
    const row = await invitationRow(created.body.invitation_id);
    expect(row.token_hash).toBe(hashInvitationToken(created.body.token));
    expect(JSON.stringify(row)).not.toContain(created.body.token);

    const mail = await smtp.waitFor(email);
    expect(mail.from).toBe('tenants@service.test');
    expect(mail.header('subject')).toContain('Initech');
    const text = mail.part('text/plain')!;
    const html = mail.part('text/html')!;
    for (const body of [text, html]) {
      expect(body).toContain('Initech');
      expect(body).toContain('Bill Lumbergh');
      expect(body).toContain('a member');
      expect(body).toContain(created.body.expires_at);
    }
    const link = /https:\/\/app\.example\.com\/console\/invitations\/accept\?token=[A-Za-z0-9_-]+/.exec(text)?.[0];
    expect(link).toBe(created.body.accept_url);
    expect(html).toContain(`href="${link}"`);

    const token = new URL(link!).searchParams.get('token')!;
    const inviteeSub = unique('peter');
    const invitee = tokenFor({ sub: inviteeSub, email: email.toUpperCase(), name: 'Peter' });
    // Before accepting: not a member (the tenant admits by invitation only).
    await request(app.app).get('/api/tenant').set('Authorization', `Bearer ${invitee}`).set('X-Tenant', o.slug).expect(403);

    const accepted = await accept(app.app, invitee, token).expect(200);
    expect(accepted.body.tenant).toMatchObject({ tenant_id: o.tenantId, slug: o.slug });
    expect(accepted.body.membership).toMatchObject({ subject: inviteeSub, role: 'member', email: email.toUpperCase() });

    const me = await request(app.app).get('/api/tenant').set('Authorization', `Bearer ${invitee}`).set('X-Tenant', o.slug).expect(200);
    expect(me.body.membership.user_id).toBe(accepted.body.membership.user_id);

    const list = await request(app.app).get('/api/tenant/invitations').set('Authorization', `Bearer ${o.adminToken}`).set('X-Tenant', o.slug).expect(200);
    expect(list.body.total_count).toBe(1);
    expect(list.body.invitations[0]).toMatchObject({ invitation_id: created.body.invitation_id, status: 'accepted' });
    expect(list.body.invitations[0].accepted_at).not.toBeNull();
    expect(list.body.invitations[0]).not.toHaveProperty('token');

    // Reused: the token is spent.
    const again = await accept(app.app, tokenFor({ email }), token).expect(404);
    expect(again.body.error).toBe('Invitation not found');
  });

  it('an admin role invitation makes an admin', async () => {
    const o = await org();
    const email = `${unique('sam')}@initech.test`;
    const c = await invite(app.app, o, { email, role: 'admin' }).expect(201);
    const r = await accept(app.app, tokenFor({ email }), c.body.token).expect(200);
    expect(r.body.membership.role).toBe('admin');
    const mail = await smtp.waitFor(email);
    expect(mail.part('text/plain')).toContain('an admin');
  });
});

describe('refusals: status, Error body, nothing changed', () => {
  async function pending(): Promise<{ o: Org; email: string; id: string; token: string }> {
    const o = await org(plain.app);
    const email = `${unique('inv')}@initech.test`;
    const c = await invite(plain.app, o, { email }).expect(201);
    expect(c.body).toMatchObject({ role: 'member', delivery: 'not_configured', accept_url: null });
    return { o, email, id: c.body.invitation_id, token: c.body.token };
  }

  async function unchanged(p: { o: Org; id: string }, status: string, members: number) {
    expect((await invitationRow(p.id)).status).toBe(status);
    expect(await usersOf(p.o.tenantId)).toHaveLength(members);
  }

  it('wrong email → 403', async () => {
    const p = await pending();
    const r = await accept(plain.app, tokenFor({ email: `someone-else@initech.test` }), p.token).expect(403);
    expect(r.body).toMatchObject({ error: 'Access denied' });
    expect(r.body.detail).toMatch(/another email/);
    const noEmail = await accept(plain.app, tokenFor(), p.token).expect(403);
    expect(noEmail.body.error).toBe('Access denied');
    await unchanged(p, 'pending', 1);
  });

  it.each([false, 'false', 'FALSE', 0])('unverified email (email_verified %p) → 403', async (ev) => {
    const p = await pending();
    const r = await accept(plain.app, tokenFor({ claims: { email: p.email, email_verified: ev } }), p.token).expect(403);
    expect(r.body).toMatchObject({ error: 'Access denied' });
    expect(r.body.detail).toMatch(/not verified/);
    await unchanged(p, 'pending', 1);
  });

  it('expired → 410; listed as expired; resend gives a new token and kills the old one', async () => {
    const p = await pending();
    await ownerConnection()('invitations').where({ id: p.id }).update({ expires_at: new Date(Date.now() - 1000) });
    const r = await accept(plain.app, tokenFor({ email: p.email }), p.token).expect(410);
    expect(r.body).toMatchObject({ error: 'Invitation expired' });
    await unchanged(p, 'pending', 1);

    const list = await request(plain.app).get('/api/tenant/invitations?status=expired').set('Authorization', `Bearer ${p.o.adminToken}`).set('X-Tenant', p.o.slug).expect(200);
    expect(list.body.invitations.map((i: { invitation_id: string; status: string }) => [i.invitation_id, i.status])).toEqual([[p.id, 'expired']]);
    const pendingList = await request(plain.app).get('/api/tenant/invitations?status=pending').set('Authorization', `Bearer ${p.o.adminToken}`).set('X-Tenant', p.o.slug).expect(200);
    expect(pendingList.body.total_count).toBe(0);

    const resent = await request(plain.app).post(`/api/tenant/invitations/${p.id}/resend`).set('Authorization', `Bearer ${p.o.adminToken}`).set('X-Tenant', p.o.slug).expect(200);
    expect(resent.body.status).toBe('pending');
    expect(resent.body.token).not.toBe(p.token);
    expect(Date.parse(resent.body.expires_at)).toBeGreaterThan(Date.now());
    await accept(plain.app, tokenFor({ email: p.email }), p.token).expect(404);
    await accept(plain.app, tokenFor({ email: p.email }), resent.body.token).expect(200);
  });

  const resend = (p: { o: Org; id: string }) =>
    request(plain.app).post(`/api/tenant/invitations/${p.id}/resend`).set('Authorization', `Bearer ${p.o.adminToken}`).set('X-Tenant', p.o.slug);

  it('resend of a pending invitation whose email has become a member (added by subject) → 409, nothing changed', async () => {
    const p = await pending();
    const before = await invitationRow(p.id);
    await request(plain.app)
      .post('/api/tenant/members')
      .set('Authorization', `Bearer ${tokenFor({ admin: true })}`)
      .set('X-Tenant', p.o.slug)
      .send({ subject: unique('added'), email: p.email, role: 'member' })
      .expect(201);
    const r = await resend(p).expect(409);
    expect(r.body.detail).toMatch(/already has the email/);
    expect((await invitationRow(p.id)).token_hash).toBe(before.token_hash);
  });

  it('resend of an expired invitation is not blocked by a newer one for the same email that has expired too', async () => {
    const a = await pending();
    const past = new Date(Date.now() - 1000);
    await ownerConnection()('invitations').where({ id: a.id }).update({ expires_at: past });
    const b = await invite(plain.app, a.o, { email: a.email }).expect(201); // a is swept to expired
    await ownerConnection()('invitations').where({ id: b.body.invitation_id }).update({ expires_at: past });
    const r = await resend(a).expect(200);
    expect(r.body.status).toBe('pending');
    expect((await invitationRow(b.body.invitation_id)).status).toBe('expired');
    await accept(plain.app, tokenFor({ email: a.email }), r.body.token).expect(200);
  });

  it('revoked → 404; revoking again changes nothing; an accepted one cannot be revoked', async () => {
    const p = await pending();
    const rv = await request(plain.app).delete(`/api/tenant/invitations/${p.id}`).set('Authorization', `Bearer ${p.o.adminToken}`).set('X-Tenant', p.o.slug).expect(200);
    expect(rv.body.status).toBe('revoked');
    expect(rv.body.revoked_at).not.toBeNull();
    const r = await accept(plain.app, tokenFor({ email: p.email }), p.token).expect(404);
    expect(r.body).toMatchObject({ error: 'Invitation not found' });
    await unchanged(p, 'revoked', 1);
    await request(plain.app).delete(`/api/tenant/invitations/${p.id}`).set('Authorization', `Bearer ${p.o.adminToken}`).set('X-Tenant', p.o.slug).expect(200);
    const resend = await request(plain.app).post(`/api/tenant/invitations/${p.id}/resend`).set('Authorization', `Bearer ${p.o.adminToken}`).set('X-Tenant', p.o.slug).expect(409);
    expect(resend.body.error).toBe('Conflict');

    const q = await pending();
    await accept(plain.app, tokenFor({ email: q.email }), q.token).expect(200);
    const late = await request(plain.app).delete(`/api/tenant/invitations/${q.id}`).set('Authorization', `Bearer ${q.o.adminToken}`).set('X-Tenant', q.o.slug).expect(409);
    expect(late.body.error).toBe('Conflict');
    await unchanged(q, 'accepted', 2);
  });

  it('unknown token → 404', async () => {
    const r = await accept(plain.app, tokenFor({ email: 'x@initech.test' }), 'inv_not-a-real-token').expect(404);
    expect(r.body).toMatchObject({ error: 'Invitation not found' });
  });

  it('already a member → 409 (at accept and at create); a second pending invitation for the email → 409', async () => {
    const p = await pending();
    // A member whose token carries the invited email (their stored email differs).
    const member = await createUser(p.o.tenantId, { email: `${unique('m')}@initech.test` });
    const r = await accept(plain.app, tokenFor({ sub: member.subject, email: p.email }), p.token).expect(409);
    expect(r.body).toMatchObject({ error: 'Conflict' });
    expect(r.body.detail).toMatch(/already a member/);
    await unchanged(p, 'pending', 2);

    const dup = await invite(plain.app, p.o, { email: p.email.toUpperCase() }).expect(409);
    expect(dup.body.detail).toMatch(/pending invitation/);
    const existing = await invite(plain.app, p.o, { email: member.email }).expect(409);
    expect(existing.body.detail).toMatch(/already has the email/);
    expect(await ownerConnection()('invitations').where({ tenant_id: p.o.tenantId })).toHaveLength(1);
  });

  it('a non-admin member cannot invite, list, resend or revoke → 403', async () => {
    const p = await pending();
    const member = await createUser(p.o.tenantId, { role: 'member' });
    const t = tokenFor({ sub: member.subject, email: member.email });
    const r = await invite(plain.app, p.o, { email: 'friend@initech.test' }, t).expect(403);
    expect(r.body).toMatchObject({ error: 'Access denied', detail: expect.stringContaining("'tenant:invitations:write'") });
    await request(plain.app).get('/api/tenant/invitations').set('Authorization', `Bearer ${t}`).set('X-Tenant', p.o.slug).expect(403);
    await request(plain.app).post(`/api/tenant/invitations/${p.id}/resend`).set('Authorization', `Bearer ${t}`).set('X-Tenant', p.o.slug).expect(403);
    await request(plain.app).delete(`/api/tenant/invitations/${p.id}`).set('Authorization', `Bearer ${t}`).set('X-Tenant', p.o.slug).expect(403);
    await unchanged(p, 'pending', 2);
    expect(await ownerConnection()('invitations').where({ tenant_id: p.o.tenantId })).toHaveLength(1);
  });

  it("another tenant's admin cannot see, resend or revoke an invitation → 404", async () => {
    const p = await pending();
    const other = await org(plain.app, 'Other');
    await request(plain.app).delete(`/api/tenant/invitations/${p.id}`).set('Authorization', `Bearer ${other.adminToken}`).set('X-Tenant', other.slug).expect(404);
    await request(plain.app).post(`/api/tenant/invitations/${p.id}/resend`).set('Authorization', `Bearer ${other.adminToken}`).set('X-Tenant', other.slug).expect(404);
    const list = await request(plain.app).get('/api/tenant/invitations').set('Authorization', `Bearer ${other.adminToken}`).set('X-Tenant', other.slug).expect(200);
    expect(list.body.total_count).toBe(0);
    await unchanged(p, 'pending', 1);
  });

  it('bad bodies → 400', async () => {
    const o = await org(plain.app);
    for (const body of [{}, { email: 'not-an-email' }, { email: 'a@b.test', role: 'owner' }, { email: 'a@b.test', extra: 1 }]) {
      const r = await invite(plain.app, o, body).expect(400);
      expect(r.body.error).toBe('Validation error');
    }
    await request(plain.app).post('/api/invitations/accept').set('Authorization', `Bearer ${tokenFor()}`).send({}).expect(400);
    await request(plain.app).post('/api/invitations/accept').send({ token: 'x' }).expect(401);
    expect(await ownerConnection()('invitations').where({ tenant_id: o.tenantId })).toHaveLength(0);
  });
});

describe('mail delivery', () => {
  it('a mail failure does not fail the request: delivery failed, and the invitation still works', async () => {
    const o = await org(broken.app);
    const email = `${unique('f')}@initech.test`;
    const c = await invite(broken.app, o, { email }).expect(201);
    expect(c.body.delivery).toBe('failed');
    expect((await invitationRow(c.body.invitation_id)).delivery).toBe('failed');
    await accept(broken.app, tokenFor({ email }), c.body.token).expect(200);
  });
});

describe('a hung SMTP server', () => {
  it('times out: the invitation is still created, delivery failed', async () => {
    // Accepts connections and never says hello.
    const sockets: net.Socket[] = [];
    const hung = net.createServer((sock) => sockets.push(sock));
    await new Promise<void>((r) => hung.listen(0, '127.0.0.1', () => r()));
    const port = (hung.address() as net.AddressInfo).port;
    const slow = await startTestApp({ SERVICE_MULTI_TENANT_MODE: 'true', SERVICE_SMTP_URL: `smtp://127.0.0.1:${port}`, SERVICE_MAIL_FROM: 'tenants@service.test' });
    try {
      const o = await org(slow.app);
      const c = await invite(slow.app, o, { email: `${unique('h')}@initech.test` }).expect(201);
      expect(c.body.delivery).toBe('failed');
    } finally {
      await slow.close();
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => hung.close(() => r()));
    }
  }, 60_000);
});

describe('listing', () => {
  it('pages newest first with total_count and a cursor', async () => {
    const o = await org(plain.app);
    const ids: string[] = [];
    for (let i = 0; i < 5; i += 1) ids.push((await invite(plain.app, o, { email: `p${i}-${unique()}@initech.test` }).expect(201)).body.invitation_id);
    const first = await request(plain.app).get('/api/tenant/invitations?limit=2').set('Authorization', `Bearer ${o.adminToken}`).set('X-Tenant', o.slug).expect(200);
    expect(first.body.total_count).toBe(5);
    const seen = first.body.invitations.map((i: { invitation_id: string }) => i.invitation_id);
    let cursor = first.body.next_cursor;
    while (cursor) {
      const next = await request(plain.app).get(`/api/tenant/invitations?limit=2&cursor=${cursor}`).set('Authorization', `Bearer ${o.adminToken}`).set('X-Tenant', o.slug).expect(200);
      seen.push(...next.body.invitations.map((i: { invitation_id: string }) => i.invitation_id));
      cursor = next.body.next_cursor;
    }
    expect(seen).toEqual([...ids].reverse());
  });
});

describe('rate limit', () => {
  it('create and resend share the invitations counter: 50 per hour per caller', async () => {
    const o = await org(limited.app);
    const first = await invite(limited.app, o, { email: `r-${unique()}@initech.test` }).expect(201);
    expect(first.headers['x-ratelimit-limit']).toBe('50');
    for (let i = 0; i < 24; i += 1) await invite(limited.app, o, { email: `r${i}-${unique()}@initech.test` }).expect(201);
    for (let i = 0; i < 25; i += 1) {
      await request(limited.app)
        .post(`/api/tenant/invitations/${first.body.invitation_id}/resend`)
        .set('Authorization', `Bearer ${o.adminToken}`)
        .set('X-Tenant', o.slug)
        .expect(200);
    }
    const refused = await invite(limited.app, o, { email: `over-${unique()}@initech.test` }).expect(429);
    expect(refused.body.error).toBe('Rate limit exceeded');
    expect(refused.headers['retry-after']).toBeDefined();
    await request(limited.app).post(`/api/tenant/invitations/${first.body.invitation_id}/resend`).set('Authorization', `Bearer ${o.adminToken}`).set('X-Tenant', o.slug).expect(429);
    // Other operations keep their own counter.
    await request(limited.app).get('/api/tenant/invitations').set('Authorization', `Bearer ${o.adminToken}`).set('X-Tenant', o.slug).expect(200);
    expect(await ownerConnection()('invitations').where({ tenant_id: o.tenantId })).toHaveLength(25);
  });
});
