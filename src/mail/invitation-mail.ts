/**
 * Invitation mail (docs/tenants.md#invitations-and-membership-in-detail): nodemailer over
 * SERVICE_SMTP_URL, from SERVICE_MAIL_FROM. Sending never throws: the outcome is `sent`, `failed`
 * (logged) or `not_configured`, stored on the invitation as `delivery`, so a mail problem never
 * fails the request.
 */
import nodemailer, { type Transporter } from 'nodemailer';
import type { Logger } from 'pino';
import { ADMIN_ROLE, type RoleKey } from '../context/roles';

export type Delivery = 'sent' | 'failed' | 'not_configured';

export interface InvitationMail {
  to: string;
  tenantName: string;
  tenantSlug: string;
  inviter: string | null;
  role: RoleKey;
  /** The accept link (frontend URL), or null without SERVICE_FRONTEND_BASE_URL. */
  acceptUrl: string | null;
  /** The one-time token, shown in the mail when there is no link to carry it. */
  token: string;
  expiresAt: Date;
}

export interface Mailer {
  /** False without SERVICE_SMTP_URL and SERVICE_MAIL_FROM: every send is `not_configured`. */
  readonly configured: boolean;
  sendInvitation(mail: InvitationMail, log: Logger): Promise<Delivery>;
  close(): void;
}

/** Bounds on one delivery, so a hung SMTP server cannot hold a request for long (it holds no transaction: mail goes out after commit). */
const SMTP_TIMEOUTS = { connectionTimeout: 10_000, greetingTimeout: 10_000, socketTimeout: 15_000 };

const escapeHtml = (s: string): string =>
  s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

/** Subject, text and HTML of an invitation. Pure, for tests. */
export function renderInvitation(m: InvitationMail): { subject: string; text: string; html: string } {
  const who = m.inviter ?? 'An administrator';
  const expires = m.expiresAt.toISOString();
  // Names come from users and registrants: one line, so they cannot shape the message headers.
  const subject = `${who} invited you to ${m.tenantName}`.replace(/[\r\n\t]+/g, ' ');
  const how = m.acceptUrl
    ? `Accept the invitation: ${m.acceptUrl}`
    : `Accept it by sending this token to POST /api/invitations/accept while signed in with this email address:\n${m.token}`;
  const text = [
    `${who} invited you to join ${m.tenantName} (${m.tenantSlug}) as ${m.role === ADMIN_ROLE ? 'an admin' : 'a member'}.`,
    '',
    how,
    '',
    `The invitation expires at ${expires}. Sign in with ${m.to} to accept it.`,
    "If you did not expect it, ignore this message.",
  ].join('\n');
  const link = m.acceptUrl
    ? `<p><a href="${escapeHtml(m.acceptUrl)}">Accept the invitation</a></p><p>${escapeHtml(m.acceptUrl)}</p>`
    : `<p>Accept it by sending this token to <code>POST /api/invitations/accept</code> while signed in with this email address:</p><pre>${escapeHtml(m.token)}</pre>`;
  const html =
    `<p>${escapeHtml(who)} invited you to join <strong>${escapeHtml(m.tenantName)}</strong> (${escapeHtml(m.tenantSlug)}) ` +
    `as ${m.role === ADMIN_ROLE ? 'an admin' : 'a member'}.</p>${link}` +
    `<p>The invitation expires at ${escapeHtml(expires)}. Sign in with ${escapeHtml(m.to)} to accept it.</p>` +
    '<p>If you did not expect it, ignore this message.</p>';
  return { subject, text, html };
}

/**
 * Transport options from SERVICE_SMTP_URL. Parsed here rather than handed to nodemailer as a
 * `url`, because nodemailer then ignores the timeouts (a hung server held a request for 30 s).
 */
export function smtpOptions(smtpUrl: string): Parameters<typeof nodemailer.createTransport>[0] {
  const u = new URL(smtpUrl);
  const secure = u.protocol === 'smtps:';
  return {
    host: u.hostname.replace(/^\[|\]$/g, ''),
    port: u.port ? Number(u.port) : secure ? 465 : 587,
    secure,
    ...(u.username ? { auth: { user: decodeURIComponent(u.username), pass: decodeURIComponent(u.password) } } : {}),
    ...SMTP_TIMEOUTS,
  } as Parameters<typeof nodemailer.createTransport>[0];
}

/** A mailer for the configuration; without SMTP settings every send is `not_configured`. */
export function createMailer(smtpUrl: string | null, from: string | null): Mailer {
  if (smtpUrl === null || from === null) {
    return { configured: false, sendInvitation: async () => 'not_configured', close: () => undefined };
  }
  let transport: Transporter | null = null;
  return {
    configured: true,
    async sendInvitation(mail, log) {
      try {
        transport ??= nodemailer.createTransport(smtpOptions(smtpUrl));
        const { subject, text, html } = renderInvitation(mail);
        await transport.sendMail({ from, to: mail.to, subject, text, html });
        return 'sent';
      } catch (err) {
        const e = err as { code?: string; responseCode?: number; message?: string };
        // Never the message body or token; the SMTP error code and response say enough.
        log.warn({ code: e.code, response_code: e.responseCode, to_domain: mail.to.slice(mail.to.lastIndexOf('@') + 1) }, 'Invitation mail failed');
        return 'failed';
      }
    },
    close() {
      transport?.close();
    },
  };
}
