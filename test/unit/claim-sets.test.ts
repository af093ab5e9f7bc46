/**
 * Claims that name several tenants, and organization-id claims
 * (docs/identity-providers.md#several-tenants-in-one-claim,
 * docs/identity-providers.md#organization-ids), as pure functions: arrays and Keycloak's map are
 * sets, an object with plain values is one organization.
 */
import { claimedOrganizationIds, claimedSlugs, requestedTenant, tenantFromClaims } from '../../src/tenancy/resolve';

describe('claimedSlugs', () => {
  it.each([
    ['Acme', ['acme']],
    [['Acme', 'Globex', 'acme', ''], ['acme', 'globex']],
    [{ acme: { id: '1' }, 'Globex Inc': { id: '2' } }, ['acme', 'globex-inc']],
    [{ slug: 'Acme', name: 'x' }, ['acme']],
    [{ name: 'Acme', id: 'x' }, ['acme']],
    [[{ slug: 'a' }, { name: 'B' }], ['a', 'b']],
    [[], []],
    [{}, []],
    [null, []],
  ])('%j → %j', (value, slugs) => {
    expect(claimedSlugs(value)).toEqual(slugs);
  });
});

describe('claimedOrganizationIds', () => {
  it.each([
    ['org_2abc', false, ['org_2abc']],
    [42, false, ['42']],
    [['a', 'b', 'a'], false, ['a', 'b']],
    [{ acme: { id: 'uuid-1' }, globex: { id: 'uuid-2' } }, false, ['uuid-1', 'uuid-2']],
    [{ id: 'o1', slg: 'acme' }, false, ['o1']],
    [[{ id: 'o1' }, 'o2'], false, ['o1', 'o2']],
    // Keycloak's default array of aliases: in a claim that also names tenants, strings are names.
    [['acme', 'globex'], true, []],
    [{ acme: { id: 'uuid-1' } }, true, ['uuid-1']],
    ['', false, []],
    ['   ', false, []],
    ['x'.repeat(256), false, []],
    [{ acme: { name: 'no id' } }, false, []],
    [true, false, []],
  ])('%j (objects only: %s) → %j', (value, objectsOnly, ids) => {
    expect(claimedOrganizationIds(value, objectsOnly)).toEqual(ids);
  });
});

describe('requestedTenant with sets and ids', () => {
  const base = { header: null, customClaim: null };
  it('a set of one is that tenant', () => {
    expect(tenantFromClaims({ organization: ['Acme'] }, null)).toEqual({ slug: 'acme', source: 'organization_claim', claim: 'organization' });
  });
  it('never silently the first of several', () => {
    expect(requestedTenant({ ...base, claims: { org: ['a', 'b'] } })).toEqual({ kind: 'choose', claim: 'org', listed: ['a', 'b'] });
    expect(requestedTenant({ ...base, header: 'b', claims: { org: ['a', 'b'] } })).toEqual({ kind: 'tenant', slug: 'b', source: 'organization_claim', claim: 'org', fromSet: true });
    expect(requestedTenant({ ...base, header: 'c', claims: { org: ['a', 'b'] } })).toEqual({ kind: 'unlisted', claim: 'org', listed: ['a', 'b'], headerSlug: 'c' });
  });
  it('organization ids come first, by dot path', () => {
    expect(requestedTenant({ ...base, idClaim: 'o.id', claims: { tenant: 'acme', o: { id: 'org_1' } } })).toEqual({
      kind: 'linked',
      organizationIds: ['org_1'],
      header: null,
      claim: 'o.id',
    });
  });
  it('several ids without a header must be chosen', () => {
    expect(requestedTenant({ ...base, idClaim: 'organizations', claims: { organizations: ['x', 'y'] } })).toMatchObject({ kind: 'choose', listed: ['x', 'y'] });
  });
  it('no ids in the claim: the name sources follow', () => {
    expect(requestedTenant({ ...base, idClaim: 'org_id', claims: { tenant: 'acme' } })).toMatchObject({ kind: 'tenant', slug: 'acme', source: 'tenant_claim' });
    // Keycloak preset: the id claim is the name claim; its array of aliases holds names.
    expect(requestedTenant({ ...base, idClaim: 'organization', customClaim: 'organization', claims: { organization: ['acme'] } })).toMatchObject({
      kind: 'tenant',
      slug: 'acme',
      source: 'custom_claim',
    });
  });
});
