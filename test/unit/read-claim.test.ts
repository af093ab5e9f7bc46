/**
 * Claim names and dot paths (docs/configuration.md#claim-names-and-dot-paths): a dot path walks
 * nested objects only; a literal top-level key containing a dot never matches it (the Keycloak
 * preset's `realm_access.roles` cannot be forged by a flat claim of that name).
 */
import { readClaim } from '../../src/context/claims';
import { loadConfig } from '../../src/config';
import { tenantFromClaims } from '../../src/tenancy/resolve';

describe('readClaim', () => {
  it('a dot path walks nested objects', () => {
    expect(readClaim({ realm_access: { roles: ['admin'] } }, 'realm_access.roles')).toEqual(['admin']);
    expect(readClaim({ o: { rol: 'admin' } }, 'o.rol')).toBe('admin');
    expect(readClaim({ roles: ['a'] }, 'roles')).toEqual(['a']);
  });

  it('a literal top-level key named like the path never matches it, alone or beside the nested claim', () => {
    expect(readClaim({ 'realm_access.roles': ['admin'] }, 'realm_access.roles')).toBeUndefined();
    expect(readClaim({ 'realm_access.roles': ['admin'], realm_access: { roles: ['user'] } }, 'realm_access.roles')).toEqual(['user']);
    expect(readClaim({ 'o.rol': 'admin' }, 'o.rol')).toBeUndefined();
  });

  it('a namespaced name (URL or URN) is one top-level key, never walked', () => {
    expect(readClaim({ 'https://acme.example/roles': ['admin'] }, 'https://acme.example/roles')).toEqual(['admin']);
    expect(readClaim({ 'https://acme': { 'example/roles': ['admin'] } }, 'https://acme.example/roles')).toBeUndefined();
    expect(readClaim({ 'urn:zitadel:iam:user:resourceowner:name': 'Acme' }, 'urn:zitadel:iam:user:resourceowner:name')).toBe('Acme');
  });

  it('the Keycloak preset: a flat realm_access.roles claim makes nobody an admin, and names no tenant by a dot path', () => {
    const config = loadConfig({ SERVICE_IDP_PRESET: 'keycloak' });
    expect(config.adminRoleClaim).toBe('realm_access.roles');
    expect(readClaim({ 'realm_access.roles': [config.adminRole] }, config.adminRoleClaim)).toBeUndefined();
    expect(tenantFromClaims({ 'app.org': 'Forged' }, 'app.org')).toBeNull();
    expect(tenantFromClaims({ 'app.org': 'Forged', app: { org: 'Deep Org' } }, 'app.org')?.slug).toBe('deep-org');
  });
});
