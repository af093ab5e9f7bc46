/**
 * Settings whose keys look secret (the ones a list of bad names missed, and more): events must
 * never keep their values (test/unit/event-secrets.test.ts, test/api/events/events-data.test.ts).
 */
import crypto from 'node:crypto';

/** Secret-looking keys a list of bad names misses or catches; none may keep its value. */
export const SECRET_LOOKING_KEYS = [
  'smtp_pass', 'smtp_password', 'passphrase', 'signing_key', 'x-api-key', 'hmac_key', 'encryption_key', 'database_url',
  'api-key', 'stripe_sk', 'stripe_secret_key', 'apiKey', 'api_key', 'privateKey', 'private_key', 'AWS_ACCESS_KEY_ID',
  'aws_secret_access_key', 'client_secret', 'clientSecret', 'refresh_token', 'access_token', 'id_token', 'bearer',
  'authorization', 'auth', 'cookie', 'session', 'jwt', 'pin', 'otp_seed', 'totp', 'mfa_seed', 'ssh_key', 'pgp_key',
  'salt', 'pepper', 'credentials', 'license_key', 'slack_webhook', 'sentry_dsn', 'redis_url', 'mongo_uri',
  'connection_string', 'master_key', 'sendgrid', 'twilio_auth', 'password', 'secret', 'token',
];

/** A distinct value per key, some nested, one a URL with a password. */
export function secretSettings(): Record<string, unknown> {
  const s: Record<string, unknown> = {};
  for (const k of SECRET_LOOKING_KEYS) s[k] = `v-${k}-${crypto.randomBytes(6).toString('hex')}`;
  s.database_url = `postgres://app:pw-${crypto.randomBytes(6).toString('hex')}@db.internal:5432/app`;
  s.credentials = { user: 'svc', pass: `v-nested-${crypto.randomBytes(6).toString('hex')}` };
  return s;
}

