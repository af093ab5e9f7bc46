/**
 * Invitation mail goes out after the invitation has committed
 * (docs/tenants.md#invitations-and-membership-in-detail): a mail server that stalls holds no pooled
 * connection and no lock. With a pool of 2 and 4 invitation mails held open by a real SMTP server
 * (the `smtp-server` package), another tenant's requests all complete, the invitations are already
 * listed, and once the server answers, `delivery` says how each mail went. Outcomes are counted,
 * never timed.
 */
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { SMTPServer } from 'smtp-server';
import { startTestApp, type TestApp } from '../../helpers/app';
import { closeOwnerConnection, createTenant, createUser, ownerConnection, tokenFor, unique } from '../../helpers/factories';

jest.setTimeout(180_000);

interface HeldMail {
  to: string;
  answered: boolean;
  /** The client gave up (its socket timeout) before the server answered. */
  closed: boolean;
  answer(accept: boolean): void;
}

let smtp: SMTPServer;
let smtpUrl: string;
let stalling = false;
const held: HeldMail[] = [];
let t: TestApp;

beforeAll(async () => {
  const bySession = new Map<string, HeldMail>();
  smtp = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData(stream, session, callback) {
      stream.resume();
      stream.on('end', () => {
        if (!stalling) return callback();
        // Holds the answer to the message until the test gives it.
        const mail: HeldMail = {
          to: session.envelope.rcptTo[0]!.address.toLowerCase(),
          answered: false,
          closed: false,
          answer(accept) {
            if (this.answered) return;
            this.answered = true;
            callback(accept ? null : Object.assign(new Error('Mailbox unavailable'), { responseCode: 550 }));
          },
        };
        bySession.set(session.id, mail);
        held.push(mail);
      });
    },
    onClose(session) {
      const mail = bySession.get(session.id);
      if (mail && !mail.answered) mail.closed = true;
    },
  });
  await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', resolve));
  smtpUrl = `smtp://127.0.0.1:${((smtp as unknown as { server: { address(): AddressInfo } }).server.address()).port}`;
  t = await startTestApp({ SERVICE_MULTI_TENANT_MODE: 'true', SERVICE_SMTP_URL: smtpUrl, SERVICE_MAIL_FROM: 'tenants@service.test' }, { poolMax: 2 });
});

afterAll(async () => {
  for (const m of held) m.answer(true);
  await t?.close();
  await new Promise<void>((resolve) => smtp.close(() => resolve()));
  await closeOwnerConnection();
});

it('a stalled mail server holds no connection: other tenants are served, delivery ends correct', async () => {
  // Tenant A: a self-registered tenant whose admin invites.
  const adminSub = unique('boss');
  const adminAuth = `Bearer ${tokenFor({ sub: adminSub, email: `${adminSub}@initech.test` })}`;
  const reg = await request(t.app)
    .post('/api/tenants/register')
    .set('Authorization', adminAuth)
    .send({ organization_name: `Stall ${adminSub}`, admin_email: `${adminSub}@initech.test`, include_sample_data: false })
    .expect(201);
  const inA = (r: request.Test) => r.set('Authorization', adminAuth).set('X-Tenant', reg.body.tenant_slug as string);
  // An invitation mailed while the server still answers at once, to resend later.
  const first = await inA(request(t.app).post('/api/tenant/invitations')).send({ email: `${unique('first')}@initech.test` }).expect(201);
  expect(first.body.delivery).toBe('sent');

  // Tenant B: someone else entirely.
  const b = await createTenant();
  const bUser = await createUser(b.id);
  const inB = (r: request.Test) => r.set('Authorization', `Bearer ${tokenFor({ sub: bUser.subject })}`).set('X-Tenant', b.slug);

  stalling = true;
  const emails = [`${unique('one')}@initech.test`, `${unique('two')}@initech.test`, `reject-${unique('three')}@initech.test`];
  const creates = emails.map((email) => inA(request(t.app).post('/api/tenant/invitations')).send({ email }).then((r) => r));
  const resend = inA(request(t.app).post(`/api/tenant/invitations/${first.body.invitation_id}/resend`)).then((r) => r);
  // Twice the pool's size in mails, all held open by the server at once.
  while (held.length < 4) await new Promise((r) => setTimeout(r, 20));

  // Meanwhile another tenant's reads and writes all complete.
  const others = await Promise.all(
    Array.from({ length: 12 }, (_, i) =>
      i % 2 === 0 ? inB(request(t.app).post('/api/boards')).send({ name: `while stalled ${i}` }) : inB(request(t.app).get('/api/boards')),
    ),
  );
  expect(others.map((r) => r.status).sort()).toEqual([...Array(6).fill(200), ...Array(6).fill(201)]);
  // The invitations committed before their mail went out: listed already, not yet delivered.
  const listed = await inA(request(t.app).get('/api/tenant/invitations?status=pending')).expect(200);
  expect(listed.body.total_count).toBe(4);
  expect(listed.body.invitations.map((i: { delivery: string }) => i.delivery)).toEqual(['failed', 'failed', 'failed', 'failed']);
  expect(held.length).toBe(4);

  // The server answers: accepts three, refuses the `reject-` one.
  for (const m of held) m.answer(!m.to.startsWith('reject-'));
  const answers = [...(await Promise.all(creates)), await resend];
  expect(answers.map((r) => r.status)).toEqual([201, 201, 201, 200]);
  for (const r of answers) {
    const mail = held.find((m) => m.to === String(r.body.email).toLowerCase())!;
    // A client whose own socket timeout ended the wait first reports failed, as it should.
    const expected = mail.closed || mail.to.startsWith('reject-') ? 'failed' : 'sent';
    expect({ email: r.body.email, delivery: r.body.delivery }).toEqual({ email: r.body.email, delivery: expected });
    const row = await ownerConnection()('invitations').where({ id: r.body.invitation_id }).first('delivery');
    expect({ email: r.body.email, stored: row.delivery }).toEqual({ email: r.body.email, stored: expected });
  }
});
