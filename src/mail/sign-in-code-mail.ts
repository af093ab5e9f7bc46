/**
 * The one-time code of email sign-in (docs/sign-in.md#the-sign-in-page), over the service's SMTP
 * (SERVICE_SMTP_URL, SERVICE_MAIL_FROM). Sending never throws: `sent`, `failed` (logged without
 * the code) or `not_configured`.
 */
import nodemailer, { type Transporter } from 'nodemailer';
import type { Logger } from 'pino';
import type { MailConfig } from '../config/smtp';
import { smtpOptions, type Delivery } from './invitation-mail';

export interface SignInCodeMail {
  readonly to: string;
  readonly code: string;
  readonly minutes: number;
  /** Where the code signs in (the service's public host), so a person can tell a phishing mail. */
  readonly site: string;
}

export interface SignInCodeMailer {
  readonly configured: boolean;
  send(mail: SignInCodeMail, log: Logger): Promise<Delivery>;
  close(): void;
}

/** Subject and text of the mail. Pure, for tests. */
export function renderSignInCode(m: SignInCodeMail): { subject: string; text: string } {
  const subject = `Your sign-in code: ${m.code}`;
  const text = [
    `Your code to sign in at ${m.site}:`,
    '',
    `    ${m.code}`,
    '',
    `It works for ${m.minutes} minutes, once, in the browser where you asked for it.`,
    'If you did not try to sign in, ignore this message: nobody can sign in without the code.',
  ].join('\n');
  return { subject: subject.replace(/[\r\n\t]+/g, ' '), text };
}

export function createSignInCodeMailer(config: MailConfig): SignInCodeMailer {
  const { smtpUrl, mailFrom } = config;
  if (smtpUrl === null || mailFrom === null) return { configured: false, send: async () => 'not_configured', close: () => undefined };
  let transport: Transporter | null = null;
  return {
    configured: true,
    async send(mail, log) {
      try {
        transport ??= nodemailer.createTransport(smtpOptions(smtpUrl));
        const { subject, text } = renderSignInCode(mail);
        await transport.sendMail({ from: mailFrom, to: mail.to, subject, text });
        return 'sent';
      } catch (err) {
        const e = err as { code?: string; responseCode?: number };
        log.warn({ code: e.code, response_code: e.responseCode, to_domain: mail.to.slice(mail.to.lastIndexOf('@') + 1) }, 'Sign-in code mail failed');
        return 'failed';
      }
    },
    close() {
      transport?.close();
    },
  };
}
