import pino from 'pino';
import { createMailer, renderInvitation, smtpOptions, type InvitationMail } from '../../src/mail/invitation-mail';

const mail = (over: Partial<InvitationMail> = {}): InvitationMail => ({
  to: 'bob@acme.test',
  tenantName: 'Acme',
  tenantSlug: 'acme',
  inviter: 'Ann',
  role: 'member',
  acceptUrl: 'https://app.acme.test/invitations/accept?token=inv_abc',
  token: 'inv_abc',
  expiresAt: new Date('2030-01-02T03:04:05.000Z'),
  ...over,
});

describe('renderInvitation', () => {
  it('names the tenant, inviter, role, link and expiry in text and HTML', () => {
    const r = renderInvitation(mail({ role: 'admin' }));
    expect(r.subject).toBe('Ann invited you to Acme');
    for (const body of [r.text, r.html]) {
      for (const part of ['Acme', 'Ann', 'an admin', 'https://app.acme.test/invitations/accept?token=inv_abc', '2030-01-02T03:04:05.000Z']) expect(body).toContain(part);
    }
  });

  it('escapes names in HTML and keeps the subject on one line', () => {
    const r = renderInvitation(mail({ tenantName: '<script>x</script>\r\nBcc: eve@evil.test', inviter: '"Eve" <a href=x>' }));
    expect(r.html).not.toContain('<script>');
    expect(r.html).toContain('&lt;script&gt;');
    expect(r.html).not.toContain('<a href=x>');
    expect(r.subject).not.toMatch(/[\r\n]/);
  });

  it('without a frontend URL the mail carries the token and how to use it', () => {
    const r = renderInvitation(mail({ acceptUrl: null }));
    expect(r.text).toContain('POST /api/invitations/accept');
    expect(r.text).toContain('inv_abc');
    expect(r.html).toContain('inv_abc');
  });
});

describe('createMailer', () => {
  it('is not_configured without SMTP settings', async () => {
    await expect(createMailer(null, null).sendInvitation(mail(), pino({ level: 'silent' }))).resolves.toBe('not_configured');
  });
});

describe('smtpOptions', () => {
  it('reads host, port, TLS and credentials from the URL and keeps the timeouts', () => {
    expect(smtpOptions('smtp://us%40er:p%3Ass@mail.acme.test:2525')).toMatchObject({
      host: 'mail.acme.test',
      port: 2525,
      secure: false,
      auth: { user: 'us@er', pass: 'p:ss' },
      greetingTimeout: 10_000,
    });
    expect(smtpOptions('smtps://mail.acme.test')).toMatchObject({ port: 465, secure: true });
    expect(smtpOptions('smtp://mail.acme.test')).toMatchObject({ port: 587, secure: false });
    expect(smtpOptions('smtp://mail.acme.test')).not.toHaveProperty('auth');
  });
});
