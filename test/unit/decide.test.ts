/**
 * The membership decision (src/tenancy/decide.ts) without a database: every rule of
 * docs/tenants.md#tenant-resolution, docs/tenants.md#membership and docs/identity-providers.md,
 * from facts as the statement reads them.
 */
import { decideEntry, decideProductAccess, refusalOf, roleOfToken, tokenRole, tokenSpeaksForRole, type EntryRequest, type TenantAccess, type TenantFacts } from '../../src/tenancy/decide';
import { requestedTenant } from '../../src/tenancy/resolve';
import type { RoleKey } from '../../src/context/roles';
import { SYSTEM_PERMISSIONS } from '../../src/context/permissions';

const ISS = 'https://idp.example';
const member: TenantAccess = { level: 'tenantMember', permission: null, method: 'GET', path: '/api/boards' };
const adminOnly: TenantAccess = { level: 'tenantAdmin', permission: 'tenant:members:write', method: 'DELETE', path: '/api/tenant/members/{user_id}' };
const ALL = [...SYSTEM_PERMISSIONS];
const caller = { issuer: ISS, isPlatformAdmin: false };
const platformAdmin = { issuer: ISS, isPlatformAdmin: true };

const facts = (over: Partial<TenantFacts> = {}): TenantFacts => ({
  slug: 'acme',
  status: 'active',
  provisionFromClaims: true,
  claimsIssuer: null,
  links: [],
  rolesFromClaims: false,
  memberRole: null,
  rolePermissions: { admin: ALL, member: [] },
  ...over,
});
const byClaim: EntryRequest = { kind: 'tenant', slug: 'acme', source: 'tenant_claim', claim: 'tenant' };
const byHeader: EntryRequest = { kind: 'tenant', slug: 'acme', source: 'header' };
const byEmail: EntryRequest = { kind: 'tenant', slug: 'acme', source: 'email_domain', claim: 'email' };
const byDefault: EntryRequest = { kind: 'default' };
const byLink = (ids: string[], header: string | null = null): EntryRequest => ({ kind: 'linked', organizationIds: ids, header, claim: 'org_id' });

const refusal = (d: ReturnType<typeof decideEntry>) => {
  if (d.kind !== 'refuse') throw new Error(`expected a refusal, got ${JSON.stringify(d)}`);
  return { status: d.error.status, error: d.error.error, detail: d.error.detail };
};

describe('resolution: what the request alone settles', () => {
  it('no source → 400 Missing X-Tenant header, multi_tenant_mode true', () => {
    const e = refusalOf(requestedTenant({ claims: {}, header: null, customClaim: null }))!;
    expect(e.status).toBe(400);
    expect(e.toBody('r')).toMatchObject({ error: 'Missing X-Tenant header', multi_tenant_mode: true });
  });
  it('a claim names A and X-Tenant names B → 403 Access denied naming both', () => {
    const e = refusalOf(requestedTenant({ claims: { tenant: 'a' }, header: 'b', customClaim: null }))!;
    expect(e.status).toBe(403);
    expect(e.detail).toMatch(/'a'.*'b'/);
  });
  it('a tenant request passes through', () => {
    expect(refusalOf(requestedTenant({ claims: { tenant: 'a' }, header: null, customClaim: null }))).toBeNull();
  });
});

describe('resolution: the tenant', () => {
  it('unknown slug → 404 naming it', () => {
    expect(refusal(decideEntry(byHeader, null, caller, member))).toEqual({ status: 404, error: 'Tenant not found', detail: "Tenant 'acme' not found." });
  });
  it('missing default tenant (single-tenant mode) → 503', () => {
    expect(refusal(decideEntry(byDefault, null, caller, member)).status).toBe(503);
  });
  it('awaiting approval → 403 Tenant pending approval, for members and platform admins alike', () => {
    for (const who of [caller, platformAdmin]) {
      expect(refusal(decideEntry(byClaim, facts({ status: 'pending_approval', memberRole: 'admin' }), who, member))).toMatchObject({ status: 403, error: 'Tenant pending approval' });
    }
  });
  it('a pending tenant never provisions', () => {
    expect(refusal(decideEntry(byClaim, facts({ status: 'pending_approval' }), caller, member)).error).toBe('Tenant pending approval');
  });
  it('suspended or pending deletion → 403 Tenant suspended, for members, platform admins and every access level alike', () => {
    for (const status of ['suspended', 'pending_deletion'] as const) {
      for (const who of [caller, platformAdmin]) {
        for (const access of [member, adminOnly]) {
          expect(refusal(decideEntry(byHeader, facts({ status, memberRole: 'admin' }), who, access))).toMatchObject({ status: 403, error: 'Tenant suspended' });
        }
      }
      // A first use from a claim provisions nothing.
      expect(refusal(decideEntry(byClaim, facts({ status }), caller, member)).error).toBe('Tenant suspended');
    }
  });
  it('a stranger is not told the tenant is suspended: 403 Access denied', () => {
    expect(refusal(decideEntry(byHeader, facts({ status: 'suspended' }), caller, member)).error).toBe('Access denied');
  });
});

describe('membership', () => {
  it('an existing member enters whatever the source and policy, without provisioning', () => {
    for (const req of [byClaim, byHeader, byEmail, byDefault]) {
      expect(decideEntry(req, facts({ memberRole: 'member', provisionFromClaims: false }), caller, member)).toEqual({
        kind: 'enter',
        source: req.kind === 'default' ? 'single_tenant' : (req as { source: string }).source,
        provision: false,
        role: null,
        permissions: [],
      });
    }
  });
  it('single-tenant mode: every caller is provisioned in the default tenant', () => {
    expect(decideEntry(byDefault, facts({ provisionFromClaims: false }), caller, member)).toEqual({ kind: 'enter', source: 'single_tenant', provision: true, role: 'member', permissions: [] });
  });
  it.each(['custom_claim', 'tenant_claim', 'organization_claim', 'namespace_claim'] as const)('a claim (%s) provisions where provision_from_claims is true', (source) => {
    expect(decideEntry({ kind: 'tenant', slug: 'acme', source, claim: 'x' }, facts(), caller, member)).toEqual({ kind: 'enter', source, provision: true, role: 'member', permissions: [] });
  });
  it('a claim provisions when claims_issuer equals the token iss', () => {
    expect(decideEntry(byClaim, facts({ claimsIssuer: ISS }), caller, member)).toMatchObject({ kind: 'enter', provision: true });
  });
  it('a claim from another issuer than claims_issuer → 403 saying so', () => {
    expect(refusal(decideEntry(byClaim, facts({ claimsIssuer: 'https://other.example' }), caller, member))).toMatchObject({
      status: 403,
      error: 'Access denied',
      detail: expect.stringMatching(/another identity provider/),
    });
  });
  it('a claim where provision_from_claims is false → 403, invitation only', () => {
    expect(refusal(decideEntry(byClaim, facts({ provisionFromClaims: false }), caller, member)).detail).toMatch(/invitation only/);
  });
  it.each([
    ['header', byHeader],
    ['email domain', byEmail],
  ])('the %s never provisions → 403 Access denied', (_name, req) => {
    expect(refusal(decideEntry(req, facts(), caller, member))).toEqual({ status: 403, error: 'Access denied', detail: "The user does not belong to tenant 'acme'." });
  });
  it('a platform admin who is not a member enters without a membership (header, email, refused claim)', () => {
    for (const [req, f] of [
      [byHeader, facts()],
      [byEmail, facts()],
      [byClaim, facts({ provisionFromClaims: false })],
    ] as const) {
      expect(decideEntry(req, f, platformAdmin, member)).toMatchObject({ kind: 'enter', provision: false });
    }
  });
  it('a platform admin named by a provisioning claim is provisioned like anyone', () => {
    expect(decideEntry(byClaim, facts(), platformAdmin, member)).toMatchObject({ kind: 'enter', provision: true });
  });
});

describe('x-permission: the system permission the operation needs', () => {
  it("a member whose role lacks it → 403 Access denied naming the permission and the operation", () => {
    expect(refusal(decideEntry(byHeader, facts({ memberRole: 'member' }), caller, adminOnly))).toEqual({
      status: 403,
      error: 'Access denied',
      detail: "Role 'member' in tenant 'acme' does not hold permission 'tenant:members:write', which DELETE /api/tenant/members/{user_id} needs.",
    });
  });
  it('a first use (provisioned as member) → 403 Access denied, nothing provisioned', () => {
    expect(refusal(decideEntry(byClaim, facts(), caller, adminOnly)).error).toBe('Access denied');
  });
  it('any role holding it enters, whatever its key; admin is the role holding them all; a platform admin enters', () => {
    const it = { ...facts({ memberRole: 'it-admin' }), rolePermissions: { admin: ALL, member: [], 'it-admin': ['tenant:directory:manage', 'tenant:members:read'] } };
    const scim: TenantAccess = { level: 'tenantAdmin', permission: 'tenant:directory:manage', method: 'PUT', path: '/api/tenant/scim' };
    expect(decideEntry(byHeader, it, caller, scim)).toMatchObject({ kind: 'enter', permissions: ['tenant:directory:manage', 'tenant:members:read'] });
    expect(refusal(decideEntry(byHeader, it, caller, adminOnly)).detail).toMatch(/Role 'it-admin' .* 'tenant:members:write'/);
    expect(decideEntry(byHeader, facts({ memberRole: 'admin' }), caller, adminOnly).kind).toBe('enter');
    expect(decideEntry(byHeader, facts(), platformAdmin, adminOnly).kind).toBe('enter');
    expect(decideEntry(byHeader, facts({ memberRole: 'member' }), platformAdmin, adminOnly).kind).toBe('enter');
  });
  it('an admin role stripped of a permission is refused like any other (roles are data)', () => {
    const stripped = facts({ memberRole: 'admin', rolePermissions: { admin: ['tenant:members:read'], member: [] } });
    expect(refusal(decideEntry(byHeader, stripped, caller, adminOnly)).error).toBe('Access denied');
  });
  it('a tenantMember operation may need a permission too; none: every member', () => {
    const list: TenantAccess = { level: 'tenantMember', permission: 'tenant:members:read', method: 'GET', path: '/api/tenant/members' };
    expect(decideEntry(byHeader, facts({ memberRole: 'member', rolePermissions: { admin: ALL, member: ['tenant:members:read'] } }), caller, list).kind).toBe('enter');
    expect(refusal(decideEntry(byHeader, facts({ memberRole: 'member' }), caller, list)).error).toBe('Access denied');
    expect(decideEntry(byHeader, facts({ memberRole: 'member', rolePermissions: { admin: ALL, member: [] } }), caller, member).kind).toBe('enter');
  });
});

describe('x-access tenantPlatformAdmin', () => {
  const operatorOnly: TenantAccess = { level: 'tenantPlatformAdmin', permission: null, method: 'POST', path: '/api/tenant/members' };
  it("a tenant's own admin → 403 Forbidden; a platform admin (member or not) enters", () => {
    expect(refusal(decideEntry(byHeader, facts({ memberRole: 'admin' }), caller, operatorOnly))).toMatchObject({ status: 403, error: 'Forbidden', detail: expect.stringMatching(/not the tenant's own admins/) });
    expect(decideEntry(byHeader, facts(), platformAdmin, operatorOnly).kind).toBe('enter');
    expect(decideEntry(byHeader, facts({ memberRole: 'member' }), platformAdmin, operatorOnly).kind).toBe('enter');
  });
});

describe('identity providers: several tenants in one claim', () => {
  it('no header → 400 saying the header must choose', () => {
    const e = refusalOf(requestedTenant({ claims: { organization: ['acme', 'globex'] }, header: null, customClaim: null }))!;
    expect(e.error).toBe('Missing X-Tenant header');
    expect(e.detail).toMatch(/names several tenants.*must choose/);
  });
  it('a header outside the set → 403 saying the token does not list it', () => {
    const e = refusalOf(requestedTenant({ claims: { organization: { acme: { id: '1' }, globex: { id: '2' } } }, header: 'initech', customClaim: null }))!;
    expect(e.status).toBe(403);
    expect(e.detail).toMatch(/'initech'.*does not list/);
  });
  it('the header chooses one of them, provisioned like a claim', () => {
    const req = requestedTenant({ claims: { organization: ['acme', 'globex'] }, header: 'globex', customClaim: null });
    expect(req).toEqual({ kind: 'tenant', slug: 'globex', source: 'organization_claim', claim: 'organization', fromSet: true });
    expect(decideEntry(req as EntryRequest, facts({ slug: 'globex' }), caller, member)).toMatchObject({ kind: 'enter', provision: true });
  });
});

describe('identity providers: links by organization id', () => {
  const linked = facts({ links: [{ issuer: ISS, organizationId: 'org_1' }] });
  it('one linked id enters its tenant, source organization_id_claim, provisioning per policy', () => {
    expect(decideEntry(byLink(['org_1']), linked, caller, member)).toEqual({ kind: 'enter', source: 'organization_id_claim', provision: true, role: 'member', permissions: [] });
  });
  it("the link's issuer stands in for claims_issuer", () => {
    expect(decideEntry(byLink(['org_1']), { ...linked, claimsIssuer: 'https://other.example' }, caller, member)).toMatchObject({ provision: true });
  });
  it('provision_from_claims false: a linked id needs a membership', () => {
    expect(refusal(decideEntry(byLink(['org_1']), { ...linked, provisionFromClaims: false }, caller, member)).detail).toMatch(/invitation only/);
    expect(decideEntry(byLink(['org_1']), { ...linked, provisionFromClaims: false, memberRole: 'member' }, caller, member)).toMatchObject({ kind: 'enter', provision: false });
  });
  it('an id linked to no tenant → 404 naming it', () => {
    expect(refusal(decideEntry(byLink(['org_9']), null, caller, member))).toMatchObject({ status: 404, detail: expect.stringMatching(/'org_9'/) });
  });
  it('a header naming another tenant than the linked one → 403', () => {
    expect(refusal(decideEntry(byLink(['org_1'], 'globex'), linked, caller, member))).toMatchObject({ status: 403, error: 'Access denied' });
  });
  it('several ids: the header chooses a tenant whose link is among them', () => {
    expect(decideEntry(byLink(['org_0', 'org_1'], 'acme'), linked, caller, member)).toMatchObject({ kind: 'enter', source: 'organization_id_claim' });
  });
  it('several ids: a header tenant linked to none of them → 403 not listed', () => {
    expect(refusal(decideEntry(byLink(['org_2', 'org_3'], 'acme'), linked, caller, member)).detail).toMatch(/does not list/);
  });
  it('the same id from another issuer never matches', () => {
    const other = { issuer: 'https://other.example', isPlatformAdmin: false };
    expect(refusal(decideEntry(byLink(['org_0', 'org_1'], 'acme'), linked, other, member)).status).toBe(403);
  });
  it('a linked tenant never provisions from a name claim, but admits its existing members by one', () => {
    expect(refusal(decideEntry(byClaim, linked, caller, member)).detail).toMatch(/identity links|never through a name claim/);
    expect(decideEntry(byClaim, { ...linked, memberRole: 'member' }, caller, member)).toMatchObject({ kind: 'enter', provision: false });
  });
});

describe('identity providers: roles from the provider', () => {
  const follows = facts({ rolesFromClaims: true, memberRole: 'member' });
  const as = (role: string | null) => ({ ...caller, tokenRole: role === null ? null : tokenRole(role) });

  it('tokenRole: the role keys a claim names, a leading org: dropped, non-keys ignored', () => {
    expect([tokenRole('admin'), tokenRole(['x', 'admin']), tokenRole('org:admin'), tokenRole('Admin'), tokenRole(undefined), tokenRole({ admin: true }), tokenRole(['org:billing', 7, 'a b'])]).toEqual([
      ['admin'],
      ['x', 'admin'],
      ['admin'],
      [],
      [],
      [],
      ['billing'],
    ]);
  });
  it('roleOfToken: admin when listed, else the first role the tenant has, else member', () => {
    const available = { admin: [], member: [], billing: ['invoices:read'] };
    expect(roleOfToken(['x', 'admin'], available)).toBe('admin');
    expect(roleOfToken(['x', 'billing'], available)).toBe('billing');
    expect(roleOfToken(['x', 'y'], available)).toBe('member');
    expect(roleOfToken([], available)).toBe('member');
    expect(roleOfToken(['toString', 'constructor'], available)).toBe('member');
  });
  it("on: a token's custom role is taken with its permissions; one the tenant lacks is member", () => {
    const withBilling = { ...follows, rolePermissions: { admin: [], member: ['docs:read'], billing: ['invoices:read', 'invoices:write'] } };
    expect(decideEntry(byClaim, withBilling, as('org:billing'), member)).toMatchObject({ kind: 'enter', role: 'billing', permissions: ['invoices:read', 'invoices:write'] });
    expect(decideEntry(byClaim, { ...withBilling, memberRole: 'billing' }, as('org:unknown'), member)).toMatchObject({ kind: 'enter', role: 'member', permissions: ['docs:read'] });
  });
  it('on: a promotion follows the token, and admits to admin operations at once', () => {
    expect(decideEntry(byClaim, follows, as('admin'), adminOnly)).toEqual({ kind: 'enter', source: 'tenant_claim', provision: false, role: 'admin', permissions: ALL });
    expect(decideEntry(byLink(['org_1']), { ...follows, links: [{ issuer: ISS, organizationId: 'org_1' }] }, as('admin'), member)).toMatchObject({ role: 'admin' });
  });
  it('on: a demotion follows the token, the last admin included', () => {
    expect(decideEntry(byClaim, { ...follows, memberRole: 'admin' }, as('member'), member)).toMatchObject({ kind: 'enter', role: 'member' });
    expect(refusal(decideEntry(byClaim, { ...follows, memberRole: 'admin' }, as('member'), adminOnly)).error).toBe('Access denied');
  });
  it('on: the same role changes nothing', () => {
    expect(decideEntry(byClaim, follows, as('member'), member)).toMatchObject({ role: null });
  });
  it('on: a first use is provisioned with the token role', () => {
    expect(decideEntry(byClaim, { ...follows, memberRole: null }, as('admin'), adminOnly)).toEqual({ kind: 'enter', source: 'tenant_claim', provision: true, role: 'admin', permissions: ALL });
  });
  it('off (the default): the token role is ignored', () => {
    expect(decideEntry(byClaim, facts({ memberRole: 'member' }), as('admin'), member)).toMatchObject({ role: null });
    expect(refusal(decideEntry(byClaim, facts({ memberRole: 'member' }), as('admin'), adminOnly)).error).toBe('Access denied');
    expect(decideEntry(byClaim, facts({ memberRole: 'admin' }), as('member'), adminOnly)).toMatchObject({ kind: 'enter', role: null });
  });
  it('no role claim configured, or a tenant the token does not name (header): ignored', () => {
    expect(decideEntry(byClaim, follows, as(null), member)).toMatchObject({ role: null });
    expect(decideEntry(byHeader, follows, as('admin'), member)).toMatchObject({ role: null });
  });
});

describe('the decision: role and permissions (docs/roles.md)', () => {
  const m = { role: 'billing', permissions: ['invoices:read', 'invoices:write'] };
  const body = (e: ReturnType<typeof decideProductAccess>) => e && { status: e.status, error: e.error, detail: e.detail };
  it('admits a member whose role holds every permission asked', () => {
    expect(decideProductAccess('acme', m, {})).toBeNull();
    expect(decideProductAccess('acme', m, { permissions: ['invoices:write'] })).toBeNull();
    expect(decideProductAccess('acme', m, { permissions: ['invoices:read', 'invoices:write'] })).toBeNull();
  });
  it('refuses naming the first permission missing (all are required)', () => {
    expect(body(decideProductAccess('acme', m, { permissions: ['invoices:read', 'reports:read', 'users:write'] }))).toEqual({
      status: 403,
      error: 'Access denied',
      detail: "Role 'billing' in tenant 'acme' does not hold permission 'reports:read'.",
    });
  });
  it('a key no role holds (unknown to the catalogue) is refused: fail closed', () => {
    expect(body(decideProductAccess('acme', m, { permissions: ['nope'] }))?.detail).toMatch(/'nope'/);
    expect(body(decideProductAccess('acme', { role: 'member', permissions: [] }, { permissions: ['invoices:read'] }))?.status).toBe(403);
  });
  it('role: any key, held exactly; member admits every member', () => {
    expect(decideProductAccess('acme', m, { role: 'billing' })).toBeNull();
    expect(decideProductAccess('acme', m, { role: 'member' })).toBeNull();
    expect(body(decideProductAccess('acme', m, { role: 'admin' }))).toMatchObject({ status: 403, error: 'Forbidden' });
  });
  it('a platform admin who is not a member is refused', () => {
    expect(body(decideProductAccess('acme', null, {}))).toMatchObject({ status: 403, error: 'Access denied' });
  });
});

describe('identity providers: whose role claim counts (the tenant\'s trusted issuer, one tenant named)', () => {
  const OTHER = 'https://contractor-idp.example';
  const as = (issuer: string, role: RoleKey) => ({ issuer, isPlatformAdmin: false, tokenRole: [role] });
  const trusting = facts({ rolesFromClaims: true, claimsIssuer: ISS, memberRole: 'member' });
  const linked = facts({ rolesFromClaims: true, memberRole: 'member', links: [{ issuer: ISS, organizationId: 'org_1' }] });

  it("a member invited in from another issuer cannot make himself admin with that issuer's token", () => {
    expect(decideEntry(byClaim, trusting, as(OTHER, 'admin'), member)).toMatchObject({ kind: 'enter', role: null });
    expect(refusal(decideEntry(byClaim, trusting, as(OTHER, 'admin'), adminOnly)).error).toBe('Access denied');
    // Nor demote an admin: the role stays what it is.
    expect(decideEntry(byClaim, { ...trusting, memberRole: 'admin' }, as(OTHER, 'member'), adminOnly)).toMatchObject({ kind: 'enter', role: null });
  });
  it("the tenant's claims_issuer still sets the role", () => {
    expect(decideEntry(byClaim, trusting, as(ISS, 'admin'), member)).toMatchObject({ kind: 'enter', role: 'admin' });
  });
  it('claims_issuer null and no link: any accepted issuer sets the role (it could provision too)', () => {
    expect(decideEntry(byClaim, { ...trusting, claimsIssuer: null }, as(OTHER, 'admin'), member)).toMatchObject({ role: 'admin' });
  });
  it('a linked tenant: only a token naming it by its linked id, from the link issuer', () => {
    expect(decideEntry(byLink(['org_1']), linked, as(ISS, 'admin'), member)).toMatchObject({ role: 'admin' });
    // A name claim (any issuer, the link's own included) never sets the role of a linked tenant.
    expect(decideEntry(byClaim, linked, as(ISS, 'admin'), member)).toMatchObject({ kind: 'enter', role: null });
    expect(decideEntry(byClaim, linked, as(OTHER, 'admin'), member)).toMatchObject({ kind: 'enter', role: null });
    expect(decideEntry(byClaim, { ...linked, claimsIssuer: OTHER }, as(OTHER, 'admin'), member)).toMatchObject({ kind: 'enter', role: null });
  });
  it('a token naming several tenants sets no role, whichever the header chose', () => {
    const req = requestedTenant({ claims: { org: ['acme', 'globex'] }, header: 'acme', customClaim: null }) as EntryRequest;
    expect(decideEntry(req, { ...trusting, claimsIssuer: null }, as(ISS, 'admin'), member)).toMatchObject({ kind: 'enter', role: null });
    expect(decideEntry(byLink(['org_0', 'org_1'], 'acme'), linked, as(ISS, 'admin'), member)).toMatchObject({ kind: 'enter', role: null });
  });
  it('a first use the token role may not set is provisioned as member', () => {
    const open = facts({ rolesFromClaims: true, links: [{ issuer: ISS, organizationId: 'org_1' }] });
    expect(decideEntry(byLink(['org_0', 'org_1'], 'acme'), open, as(ISS, 'admin'), member)).toEqual({ kind: 'enter', source: 'organization_id_claim', provision: true, role: 'member', permissions: [] });
  });
  it('tokenSpeaksForRole: header and email never do', () => {
    expect(tokenSpeaksForRole(byHeader, facts(), caller)).toBe(false);
    expect(tokenSpeaksForRole(byEmail, facts(), caller)).toBe(false);
    expect(tokenSpeaksForRole(byDefault, facts(), caller)).toBe(false);
  });
});

describe('membership: a removal sticks', () => {
  const linked = facts({ links: [{ issuer: ISS, organizationId: 'org_1' }] });
  it('a removed caller is never provisioned again by a claim, a linked id or the single-tenant default: 403 saying so', () => {
    for (const [req, f] of [
      [byClaim, facts({ removal: 'removed' })],
      [byLink(['org_1']), { ...linked, removal: 'removed' }],
      [byDefault, facts({ removal: 'removed' })],
    ] as const) {
      expect(refusal(decideEntry(req, f, caller, member))).toEqual({
        status: 403,
        error: 'Access denied',
        detail: "The user was removed from tenant 'acme' by an admin; only an accepted invitation or a platform admin can make them a member again.",
      });
    }
  });
  it('the detail says how: left, or deprovisioned by the directory', () => {
    expect(refusal(decideEntry(byClaim, facts({ removal: 'left' }), caller, member)).detail).toMatch(/removed from tenant 'acme' when they left it/);
    expect(refusal(decideEntry(byHeader, facts({ removal: 'deprovisioned' }), caller, member)).detail).toMatch(/removed from tenant 'acme' by its directory/);
  });
  it('a token role changes nothing for a removed caller', () => {
    expect(refusal(decideEntry(byClaim, facts({ removal: 'removed', rolesFromClaims: true }), { ...caller, tokenRole: ['admin'] }, member)).status).toBe(403);
  });
  it('a member again (invitation, platform admin add) enters: the mark only matters without a membership', () => {
    expect(decideEntry(byClaim, facts({ removal: null, memberRole: 'member' }), caller, member)).toMatchObject({ kind: 'enter', provision: false });
  });
  it('a removed platform admin enters as the operator, without a membership', () => {
    expect(decideEntry(byClaim, facts({ removal: 'removed' }), platformAdmin, member)).toEqual({ kind: 'enter', source: 'tenant_claim', provision: false, role: null, permissions: [] });
  });
});

describe('directory sync (docs/directory-sync.md)', () => {
  const directory = (over: Partial<TenantFacts> = {}) => facts({ directoryManaged: true, ...over });
  const binder = { ...caller, canBindDirectoryUser: true };

  it('a directory-managed tenant never provisions from a claim, a header or the default', () => {
    for (const request of [byClaim, byHeader, byDefault]) {
      const r = refusal(decideEntry(request, directory(), caller, member));
      expect(r).toMatchObject({ status: 403, error: 'Access denied' });
      expect(r.detail).toContain('Its members come from its directory');
    }
    expect(refusal(decideEntry(byLink(['org-1']), directory({ links: [{ issuer: ISS, organizationId: 'org-1' }] }), caller, member)).detail).toContain('directory');
  });

  it('a stranger whose token can bind is asked to be bound, only by an issuer the tenant trusts', () => {
    // With neither claims_issuer nor a link: the deployment's own provider only, never any accepted issuer.
    expect(refusal(decideEntry(byClaim, directory(), binder, member)).status).toBe(403);
    expect(decideEntry(byClaim, directory(), { ...binder, providerIssuers: [ISS] }, member)).toMatchObject({ kind: 'enter', bind: true, provision: false, role: null });
    expect(decideEntry(byClaim, directory({ claimsIssuer: ISS }), binder, member)).toMatchObject({ kind: 'enter', bind: true });
    expect(decideEntry(byClaim, directory({ links: [{ issuer: ISS, organizationId: 'o' }] }), binder, member)).toMatchObject({ kind: 'enter', bind: true });
    expect(refusal(decideEntry(byClaim, directory({ claimsIssuer: 'https://other.example' }), binder, member)).status).toBe(403);
  });

  it('a removal mark stands in the way of binding', () => {
    expect(refusal(decideEntry(byClaim, directory({ removal: 'deprovisioned' }), binder, member)).detail).toContain('removed from tenant');
  });

  it('a member the directory deactivated is refused, saying so; active again enters', () => {
    const r = refusal(decideEntry(byClaim, directory({ memberRole: 'member', directoryActive: false }), caller, member));
    expect(r).toMatchObject({ status: 403, error: 'Access denied' });
    expect(r.detail).toContain('deactivated by its directory');
    expect(decideEntry(byClaim, directory({ memberRole: 'member', directoryActive: true }), caller, member)).toMatchObject({ kind: 'enter', provision: false });
  });

  it("a directory's member keeps the role its groups give, whatever a trusted token's role claim says", () => {
    const bound = directory({ memberRole: 'member', directoryActive: true, rolesFromClaims: true, claimsIssuer: ISS });
    const asAdmin = { ...caller, issuer: ISS, tokenRole: ['admin'] };
    expect(decideEntry(byClaim, bound, asAdmin, member)).toMatchObject({ kind: 'enter', role: null });
    expect(refusal(decideEntry(byClaim, bound, asAdmin, adminOnly)).error).toBe('Access denied');
    // Not the directory's: the token's role still counts.
    expect(decideEntry(byClaim, { ...bound, directoryManaged: false, directoryActive: null }, asAdmin, member)).toMatchObject({ kind: 'enter', role: 'admin' });
  });

  it('a tenant without a token still provisions as before', () => {
    expect(decideEntry(byClaim, facts({ directoryManaged: false }), binder, member)).toMatchObject({ kind: 'enter', provision: true });
  });
});
