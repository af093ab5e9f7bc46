import { isValidTenantHeader, normalizeClaimValue, requestedTenant, tenantFromClaims, tenantFromEmail } from '../../src/tenancy/resolve';

describe('normalizeClaimValue', () => {
  it.each([
    ['Acme Corp', 'acme-corp'],
    ['  ACME__Corp!! ', 'acme-corp'],
    ['acme', 'acme'],
    ['Café Zürich', 'cafe-zurich'],
    ['--x--', 'x'],
    [{ slug: 'Org One', name: 'ignored' }, 'org-one'],
    [{ name: 'Org Two', id: 'ignored' }, 'org-two'],
    [{ id: 42 }, '42'],
    [['', 'Second Choice'], 'second-choice'],
    [7, '7'],
  ])('%j → %s', (input, out) => {
    expect(normalizeClaimValue(input)).toBe(out);
  });

  it.each([[''], ['   '], ['!!!'], ['🙂'], [null], [undefined], [{}], [{ other: 'x' }], [[]], [true], [Number.NaN]])('%j → skipped', (input) => {
    expect(normalizeClaimValue(input)).toBeNull();
  });

  it('caps at 255 characters without a trailing hyphen', () => {
    const s = normalizeClaimValue(`${'a'.repeat(254)} b`)!;
    expect(s.length).toBeLessThanOrEqual(255);
    expect(s.endsWith('-')).toBe(false);
  });
});

describe('tenantFromEmail', () => {
  it.each([
    ['a@acme.com', true, 'acme'],
    ['a@mail.acme.co.uk', true, 'acme'],
    ['a@Sub.Example-Corp.io', undefined, 'example-corp'],
    ['a@gmail.com', true, null],
    ['a@googlemail.com', true, null],
    ['a@outlook.com', true, null],
    ['a@mailinator.com', true, null],
    ['a@acme.com', false, null],
    ['a@acme.com', 'false', null],
    ['a@acme.com', 'FALSE', null],
    ['a@acme.com', 0, null],
    ['a@acme.com', 1, null],
    ['a@acme.com', 'yes', null],
    ['a@acme.com', null, null],
    ['a@acme.com', 'true', 'acme'],
    ['not-an-email', true, null],
    ['a@localhost', true, null],
    ['a@192.168.0.1', true, null],
    [42, true, null],
  ])('%s (verified %s) → %s', (email, verified, out) => {
    expect(tenantFromEmail(email, verified)).toBe(out);
  });
});

describe('precedence of claim sources', () => {
  const all = { custom: 'Custom', tenant: 'T', org: 'O', organization: 'O2', org_slug: 'O3', org_name: 'O4', namespace: 'N', group: 'G', team: 'Tm', workspace: 'W' };

  it('custom claim first, when configured', () => {
    expect(tenantFromClaims(all, 'custom')).toEqual({ slug: 'custom', source: 'custom_claim', claim: 'custom' });
  });
  it('custom claim may be a dot path', () => {
    // An exact key wins over a dot path (Auth0-style namespaced claims contain dots).
    expect(tenantFromClaims({ 'https://acme.example/tenant': 'Exact', https: { 'acme.example/tenant': 'no' } }, 'https://acme.example/tenant')?.slug).toBe('exact');
    expect(tenantFromClaims({ app: { org: 'Deep Org' } }, 'app.org')).toEqual({ slug: 'deep-org', source: 'custom_claim', claim: 'app.org' });
  });
  it('then tenant', () => {
    expect(tenantFromClaims(all, null)).toEqual({ slug: 't', source: 'tenant_claim', claim: 'tenant' });
  });
  it.each([
    ['org', { org: 'a', organization: 'b', org_slug: 'c', org_name: 'd', namespace: 'e' }, 'a'],
    ['organization', { organization: 'b', org_slug: 'c', org_name: 'd', team: 'e' }, 'b'],
    ['org_slug', { org_slug: 'c', org_name: 'd', group: 'e' }, 'c'],
    ['org_name', { org_name: 'd', workspace: 'e' }, 'd'],
  ])('organization claims before namespace claims (%s)', (claim, claims, slug) => {
    expect(tenantFromClaims(claims, null)).toEqual({ slug, source: 'organization_claim', claim });
  });
  it.each([
    ['namespace', { namespace: 'a', group: 'b', team: 'c', workspace: 'd' }, 'a'],
    ['group', { group: 'b', team: 'c', workspace: 'd' }, 'b'],
    ['team', { team: 'c', workspace: 'd' }, 'c'],
    ['workspace', { workspace: 'd' }, 'd'],
  ])('namespace claims in order (%s)', (claim, claims, slug) => {
    expect(tenantFromClaims(claims, null)).toEqual({ slug, source: 'namespace_claim', claim });
  });
  it('skips a claim that normalizes to nothing and uses the next', () => {
    expect(tenantFromClaims({ tenant: '!!!', org: 'Acme' }, null)).toEqual({ slug: 'acme', source: 'organization_claim', claim: 'org' });
  });
  it('an unset custom claim falls through to the standard ones', () => {
    expect(tenantFromClaims({ tenant: 'acme' }, 'custom')).toEqual({ slug: 'acme', source: 'tenant_claim', claim: 'tenant' });
  });
});

describe('requestedTenant', () => {
  const base = { customClaim: null };
  it('claim beats header when they agree', () => {
    expect(requestedTenant({ ...base, claims: { tenant: 'acme' }, header: 'acme' })).toMatchObject({ kind: 'tenant', slug: 'acme', source: 'tenant_claim' });
  });
  it('claim and a different header is a mismatch', () => {
    expect(requestedTenant({ ...base, claims: { org: 'acme' }, header: 'other' })).toEqual({ kind: 'mismatch', claimSlug: 'acme', headerSlug: 'other', claim: 'org' });
  });
  it('header beats the email domain', () => {
    expect(requestedTenant({ ...base, claims: { email: 'a@acme.com' }, header: 'other' })).toEqual({ kind: 'tenant', slug: 'other', source: 'header' });
  });
  it('email domain when nothing else', () => {
    expect(requestedTenant({ ...base, claims: { email: 'a@acme.com' }, header: null })).toMatchObject({ kind: 'tenant', slug: 'acme', source: 'email_domain' });
  });
  it('public mail domain and nothing else is missing', () => {
    expect(requestedTenant({ ...base, claims: { email: 'a@gmail.com' }, header: null })).toEqual({ kind: 'missing' });
  });
});

describe('isValidTenantHeader', () => {
  it.each([['acme', true], ['a-1', true], ['-', true], ['Acme', false], ['a_b', false], ['a b', false], ['', false], ['ä', false], ['a'.repeat(255), true], ['a'.repeat(256), false], ['acme, other', false]])(
    '%s → %s',
    (v, ok) => expect(isValidTenantHeader(v)).toBe(ok),
  );
});
