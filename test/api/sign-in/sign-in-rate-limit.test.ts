/**
 * The sign-in browser routes' per-address limits (docs/operations.md#rate-limits,
 * docs/sign-in.md): configured low, the request past the limit from one address is refused in the
 * protocol's shape (an HTML page, or the token endpoint's JSON error) with Retry-After, and
 * another address is unaffected. Addresses come from X-Forwarded-For through a trusted loopback
 * proxy (SERVICE_TRUST_PROXY), as behind a load balancer.
 */
import { closeOwnerConnection } from '../../helpers/factories';
import { serverErrors, startProviderApp, type ProviderApp } from './provider-harness';

const LIMIT = 3;
const TOKEN_LIMIT = 2;
let p: ProviderApp;

beforeAll(async () => {
  p = await startProviderApp({
    SERVICE_RATE_LIMIT_ENABLED: 'true',
    SERVICE_RATE_LIMIT_SIGN_IN_PER_MINUTE: String(LIMIT),
    SERVICE_RATE_LIMIT_OIDC_TOKEN_PER_MINUTE: String(TOKEN_LIMIT),
    SERVICE_TRUST_PROXY: 'loopback',
  });
});

afterAll(async () => {
  const failures = serverErrors(p);
  await p.close();
  expect(failures).toEqual([]);
  await closeOwnerConnection();
});

const from = (address: string, extra: Record<string, string> = {}): Record<string, string> => ({ 'x-forwarded-for': address, ...extra });

async function spend(url: string, address: string, times: number, init: RequestInit = {}): Promise<number[]> {
  const statuses: number[] = [];
  for (let i = 0; i < times; i++) {
    const res = await fetch(url, { redirect: 'manual', ...init, headers: from(address, (init.headers as Record<string, string> | undefined) ?? {}) });
    await res.arrayBuffer();
    statuses.push(res.status);
  }
  return statuses;
}

describe('the authorization endpoint and the interaction pages', () => {
  it('refuses the request past the limit from one address with an HTML 429 and Retry-After; another address goes on', async () => {
    const url = `${p.issuer}/auth?client_id=unknown-client&response_type=code&scope=openid`;
    const first = await spend(url, '198.51.100.10', LIMIT);
    expect(first.every((s) => s !== 429)).toBe(true);
    // The interaction pages share the counter (any spelling of the path counts).
    const refused = await fetch(`${p.issuer}/INTERACTION/nothing`, { redirect: 'manual', headers: from('198.51.100.10') });
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(refused.headers.get('content-type')).toContain('text/html');
    const page = await refused.text();
    expect(page).toContain('Too many sign-in attempts');
    expect(page).not.toContain('"code"');

    const other = await fetch(url, { redirect: 'manual', headers: from('198.51.100.11') });
    await other.arrayBuffer();
    expect(other.status).not.toBe(429);
    // Discovery and the JWKS are never limited.
    for (let i = 0; i < LIMIT + 2; i++) {
      const jwks = await fetch(`${p.issuer}/jwks`, { headers: from('198.51.100.10') });
      await jwks.arrayBuffer();
      expect(jwks.status).toBe(200);
    }
  });
});

describe('the token endpoint', () => {
  it('refuses the request past the limit with the protocol\u2019s JSON error and Retry-After; another address goes on', async () => {
    const init: RequestInit = { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'grant_type=authorization_code&code=nothing&client_id=unknown-client' };
    const first = await spend(`${p.issuer}/token`, '203.0.113.20', TOKEN_LIMIT, init);
    expect(first.every((s) => s !== 429)).toBe(true);
    const refused = await fetch(`${p.issuer}/token`, { ...init, headers: from('203.0.113.20', { 'content-type': 'application/x-www-form-urlencoded' }) });
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(refused.headers.get('content-type')).toContain('application/json');
    expect(refused.headers.get('cache-control')).toBe('no-store');
    expect(await refused.json()).toEqual({ error: 'temporarily_unavailable', error_description: expect.any(String) });

    const other = await fetch(`${p.issuer}/token`, { ...init, headers: from('203.0.113.21', { 'content-type': 'application/x-www-form-urlencoded' }) });
    await other.arrayBuffer();
    expect(other.status).not.toBe(429);
  });
});

describe('the SSO routes', () => {
  it('refuses the request past the limit from one address with an HTML 429; another address goes on', async () => {
    const url = `${p.base}/sso/saml/00000000-0000-4000-8000-000000000000/metadata`;
    const first = await spend(url, '192.0.2.30', LIMIT);
    expect(first.every((s) => s !== 429)).toBe(true);
    const refused = await fetch(`${p.base}/sso/oidc/callback?state=x&code=y`, { redirect: 'manual', headers: from('192.0.2.30') });
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(refused.headers.get('content-type')).toContain('text/html');
    expect(await refused.text()).toContain('Too many sign-in attempts');

    const other = await fetch(url, { headers: from('192.0.2.31') });
    await other.arrayBuffer();
    expect(other.status).not.toBe(429);
  });
});
