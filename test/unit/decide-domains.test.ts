/**
 * The membership decision's verified-domain part (docs/domains.md#joining-by-domain,
 * docs/domains.md#directory-binding): automatic join, its limits, POST …/join, and binding
 * trusted by a verified domain (by email only).
 */
import { ApiError } from '../../src/errors';
import { decideDomainJoin, decideEntry, directoryTrust, joinRoleAllowed, type EntryRequest, type TenantAccess, type TenantFacts } from '../../src/tenancy/decide';

const ISS = 'https://idp.example';
const member: TenantAccess = { level: 'tenantMember', permission: null, method: 'GET', path: '/api/boards' };
const caller = { issuer: ISS, isPlatformAdmin: false };
const byHeader: EntryRequest = { kind: 'tenant', slug: 'acme', source: 'header' };
const verified = (join: 'none' | 'suggest' | 'automatic', joinRole = 'member') => ({ domain: 'acme.com', join, joinRole });
const facts = (over: Partial<TenantFacts> = {}): TenantFacts => ({
  slug: 'acme',
  status: 'active',
  provisionFromClaims: false,
  claimsIssuer: null,
  links: [],
  rolesFromClaims: false,
  memberRole: null,
  rolePermissions: { admin: ['tenant:members:write'], member: ['tenant:members:read'], viewer: ['boards:read'], helpdesk: ['tenant:members:read', 'tenant:invitations:write'] },
  ...over,
});

describe('automatic join', () => {
  it('provisions a stranger with the join role, saying by which domain', () => {
    expect(decideEntry(byHeader, facts({ verifiedDomain: verified('automatic', 'viewer') }), caller, member)).toMatchObject({
      kind: 'enter',
      provision: true,
      role: 'viewer',
      permissions: ['boards:read'],
      joinedByDomain: 'acme.com',
    });
  });

  it('never by suggest or none, after a removal, on a directory-managed or closed tenant, nor with an admin or tenant: role', () => {
    const refused = (f: TenantFacts) => expect(decideEntry(byHeader, f, caller, member)).toMatchObject({ kind: 'refuse' });
    refused(facts({ verifiedDomain: verified('suggest') }));
    refused(facts({ verifiedDomain: verified('none') }));
    refused(facts({ verifiedDomain: verified('automatic'), removal: 'removed' }));
    refused(facts({ verifiedDomain: verified('automatic'), directoryManaged: true }));
    refused(facts({ verifiedDomain: verified('automatic'), status: 'suspended' }));
    refused(facts({ verifiedDomain: verified('automatic', 'admin') }));
    refused(facts({ verifiedDomain: verified('automatic', 'helpdesk') }));
    refused(facts({ verifiedDomain: verified('automatic', 'gone') }));
  });
});

describe('join roles', () => {
  it('a role of the tenant, not admin, holding no administering system permission', () => {
    const perms = facts().rolePermissions;
    expect(joinRoleAllowed('member', perms)).toBe(true); // holds only tenant:members:read, as the built-in member does
    expect(joinRoleAllowed('viewer', perms)).toBe(true);
    expect(joinRoleAllowed('admin', perms)).toBe(false);
    expect(joinRoleAllowed('helpdesk', perms)).toBe(false);
    expect(joinRoleAllowed('gone', perms)).toBe(false);
  });
});

describe('POST /api/tenants/{tenant_id}/join', () => {
  it('joins by suggest or automatic; refuses the rest with the documented errors', () => {
    expect(decideDomainJoin(facts({ verifiedDomain: verified('suggest', 'viewer') }), 'id')).toEqual({ role: 'viewer', permissions: ['boards:read'], domain: 'acme.com' });
    expect(decideDomainJoin(facts({ verifiedDomain: verified('automatic') }), 'id')).toMatchObject({ role: 'member' });
    const error = (f: TenantFacts | null) => {
      const d = decideDomainJoin(f, 'id');
      if (!(d instanceof ApiError)) throw new Error('expected a refusal');
      return d.status;
    };
    expect(error(null)).toBe(404);
    expect(error(facts())).toBe(403);
    expect(error(facts({ verifiedDomain: verified('none') }))).toBe(403);
    expect(error(facts({ verifiedDomain: verified('suggest'), memberRole: 'member' }))).toBe(409);
    expect(error(facts({ verifiedDomain: verified('suggest'), removal: 'left' }))).toBe(403);
    expect(error(facts({ verifiedDomain: verified('suggest'), directoryManaged: true }))).toBe(403);
    expect(error(facts({ verifiedDomain: verified('suggest'), status: 'pending_approval' }))).toBe(403);
    expect(error(facts({ verifiedDomain: verified('suggest', 'helpdesk') }))).toBe(403);
  });
});

describe('directory binding', () => {
  it('trusted by the issuer (claims_issuer, a link, the pinned provider) or by a verified domain, else not at all', () => {
    expect(directoryTrust(facts({ claimsIssuer: ISS }), caller)).toBe('issuer');
    expect(directoryTrust(facts({ links: [{ issuer: ISS, organizationId: 'o' }] }), caller)).toBe('issuer');
    expect(directoryTrust(facts(), { ...caller, providerIssuers: [ISS] })).toBe('issuer');
    expect(directoryTrust(facts(), caller)).toBeNull();
    expect(directoryTrust(facts({ claimsIssuer: 'https://other.example' }), { ...caller, providerIssuers: [ISS] })).toBeNull();
    expect(directoryTrust(facts({ verifiedDomain: verified('none') }), caller)).toBe('domain');
    const d = decideEntry(byHeader, facts({ directoryManaged: true, verifiedDomain: verified('none') }), { ...caller, canBindDirectoryUser: true }, member);
    expect(d).toMatchObject({ kind: 'enter', bind: true, bindByEmailOnly: true });
  });
});
