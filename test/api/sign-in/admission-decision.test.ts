/**
 * Who a way of signing in admits (docs/sign-in.md#who-a-connection-admits), as the pure decision
 * on a tenant's facts: a connection provisions its tenant's strangers (member, or the verified
 * domain's join role), never the removed, only active directory users on a directory-managed
 * tenant, never a tenant that is not active; an email code admits members and automatic domain
 * joins only.
 */
import { decideAdmission, type SignInWay } from '../../../src/tenancy/sign-in-admission';
import type { TenantFacts } from '../../../src/tenancy/decide';

const PROVIDER = 'https://service.example/oidc';
const sso: SignInWay = { method: 'sso', connectionId: '00000000-0000-4000-8000-000000000001' };
const email: SignInWay = { method: 'email' };
const facts = (over: Partial<TenantFacts> = {}): TenantFacts => ({
  slug: 'acme',
  status: 'active',
  provisionFromClaims: false,
  claimsIssuer: 'https://other-idp.example',
  links: [{ issuer: 'https://org-idp.example', organizationId: 'org_1' }],
  rolesFromClaims: true,
  memberRole: null,
  rolePermissions: { admin: ['tenant:members:write'], member: [], viewer: ['boards:read'], helpdesk: ['tenant:members:write'] },
  ...over,
});
const domain = (join: 'none' | 'suggest' | 'automatic', joinRole = 'viewer') => ({ domain: 'acme.com', join, joinRole });

describe('a tenant connection', () => {
  it('provisions a stranger as member, whatever the tenant says of claims and links', () => {
    expect(decideAdmission(facts(), sso, PROVIDER, true)).toMatchObject({ kind: 'enter', provision: true, role: 'member' });
    expect(decideAdmission(facts(), sso, PROVIDER, false)).toMatchObject({ kind: 'enter', provision: true, role: 'member' });
  });

  it("gives the verified domain's join role, whatever its join policy, but never admin or a tenant: role", () => {
    for (const join of ['none', 'suggest', 'automatic'] as const) {
      expect(decideAdmission(facts({ verifiedDomain: domain(join) }), sso, PROVIDER, true)).toMatchObject({ kind: 'enter', provision: true, role: 'viewer', joinedByDomain: 'acme.com' });
    }
    expect(decideAdmission(facts({ verifiedDomain: domain('automatic', 'helpdesk') }), sso, PROVIDER, true)).toMatchObject({ provision: true, role: 'member' });
    expect(decideAdmission(facts({ verifiedDomain: domain('automatic', 'admin') }), sso, PROVIDER, true)).toMatchObject({ provision: true, role: 'member' });
  });

  it('lets a member in with their role unchanged', () => {
    expect(decideAdmission(facts({ memberRole: 'admin' }), sso, PROVIDER, true)).toMatchObject({ kind: 'enter', provision: false, role: null, permissions: ['tenant:members:write'] });
  });

  it('never admits the removed, the deactivated, or into a tenant that is not active', () => {
    for (const removal of ['removed', 'left', 'deprovisioned'] as const) {
      expect(decideAdmission(facts({ removal }), sso, PROVIDER, true)).toMatchObject({ kind: 'refuse' });
    }
    expect(decideAdmission(facts({ memberRole: 'member', directoryManaged: true, directoryActive: false }), sso, PROVIDER, true)).toMatchObject({ kind: 'refuse' });
    for (const status of ['suspended', 'pending_deletion', 'pending_approval'] as const) {
      expect(decideAdmission(facts({ status }), sso, PROVIDER, true)).toMatchObject({ kind: 'refuse' });
      expect(decideAdmission(facts({ status, memberRole: 'member' }), sso, PROVIDER, true)).toMatchObject({ kind: 'refuse' });
    }
  });

  it('on a directory-managed tenant binds a stranger to a directory user (verified email only), never provisions', () => {
    expect(decideAdmission(facts({ directoryManaged: true }), sso, PROVIDER, true)).toMatchObject({ kind: 'enter', provision: false, bind: true });
    expect(decideAdmission(facts({ directoryManaged: true }), sso, PROVIDER, false)).toMatchObject({ kind: 'refuse' });
  });
});

describe('an email code', () => {
  it('admits members and strangers joining by an automatic verified domain only', () => {
    expect(decideAdmission(facts({ memberRole: 'member' }), email, PROVIDER, true)).toMatchObject({ kind: 'enter', provision: false });
    expect(decideAdmission(facts(), email, PROVIDER, true)).toMatchObject({ kind: 'refuse' });
    expect(decideAdmission(facts({ provisionFromClaims: true, claimsIssuer: null, links: [] }), email, PROVIDER, true)).toMatchObject({ kind: 'refuse' });
    expect(decideAdmission(facts({ verifiedDomain: domain('suggest') }), email, PROVIDER, true)).toMatchObject({ kind: 'refuse' });
    expect(decideAdmission(facts({ verifiedDomain: domain('automatic') }), email, PROVIDER, true)).toMatchObject({ kind: 'enter', provision: true, role: 'viewer' });
  });

  it('never the removed, nor into a suspended tenant', () => {
    expect(decideAdmission(facts({ removal: 'removed', verifiedDomain: domain('automatic') }), email, PROVIDER, true)).toMatchObject({ kind: 'refuse' });
    expect(decideAdmission(facts({ memberRole: 'member', status: 'suspended' }), email, PROVIDER, true)).toMatchObject({ kind: 'refuse' });
  });
});
