/**
 * src/domain/events.ts: an event's data never carries a value stored under a secret-looking key,
 * at any depth (tenant settings are free-form and go into tenant.* events and webhook payloads).
 */
import { withoutSecrets } from '../../src/domain/events';

it('drops secret-named keys at any depth, whatever their spelling', () => {
  const settings = {
    theme: 'dark',
    apiKey: 'v-apikey',
    api_key: 'v-api_key',
    stripe_secret_key: 'v-stripe',
    privateKey: 'v-private',
    AWS_ACCESS_KEY_ID: 'v-aws',
    credentials: { user: 'u', pass: 'v-cred' },
    password: 'v-pw',
    nested: [{ refreshToken: 'v-refresh', label: 'ok' }, { clientSecret: 'v-client' }],
    webhook: { secret: 'whsec_v' },
  };
  const out = withoutSecrets({ tenant: { settings } });
  const text = JSON.stringify(out);
  for (const v of ['v-apikey', 'v-api_key', 'v-stripe', 'v-private', 'v-aws', 'v-cred', 'v-pw', 'v-refresh', 'v-client', 'whsec_v']) expect(text).not.toContain(v);
  expect(out).toEqual({ tenant: { settings: { theme: 'dark', nested: [{ label: 'ok' }, {}], webhook: {} } } });
});

it('keeps ordinary fields, dates as ISO text, and a __proto__ key as plain data', () => {
  const out = withoutSecrets(JSON.parse('{"name":"Acme","accept_url":"https://x/accept","at":null,"__proto__":{"polluted":true}}')) as Record<string, unknown>;
  expect(out.name).toBe('Acme');
  expect(out.accept_url).toBe('https://x/accept');
  expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  expect(withoutSecrets(new Date('2026-01-02T03:04:05Z'))).toBe('2026-01-02T03:04:05.000Z');
});
