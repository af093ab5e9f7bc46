/** Invitation mail: the SMTP server and the sender. */
import type { EnvReader } from './env-reader';

export interface MailConfig {
  /** SMTP server for invitation mail; null: no mail is sent. */
  readonly smtpUrl: string | null;
  /** Sender of invitation mail (required with smtpUrl). */
  readonly mailFrom: string | null;
}

export function readMailConfig(env: EnvReader): MailConfig {
  const smtpUrl = env.url('SERVICE_SMTP_URL', ['smtp:', 'smtps:']);
  const mailFrom = env.str('SERVICE_MAIL_FROM');
  if (mailFrom !== null && !/^[^\s@<>]+@[^\s@<>]+$|^[^<>]*<[^\s@<>]+@[^\s@<>]+>$/.test(mailFrom)) {
    env.problems.push(`SERVICE_MAIL_FROM: expected an email address ('tenants@example.com' or 'Acme <tenants@example.com>'), got '${mailFrom}'`);
  }
  if (smtpUrl !== null && mailFrom === null) env.problems.push('SERVICE_MAIL_FROM: required when SERVICE_SMTP_URL is set');
  return { smtpUrl, mailFrom };
}
