/**
 * SERVICE_IDP_PRESET (docs/identity-providers.md#presets): each preset's claim defaults, explicit
 * variables winning, and a bad preset or claim path stopping the boot.
 */
import { ConfigError, loadConfig } from '../../src/config';

describe('SERVICE_IDP_PRESET', () => {
  it.each([
    ['keycloak', { jwtTenantClaim: 'organization', jwtTenantIdClaim: 'organization', adminRoleClaim: 'realm_access.roles', jwtTenantRoleClaim: null }],
    ['auth0', { jwtTenantClaim: 'org_name', jwtTenantIdClaim: 'org_id', adminRoleClaim: 'roles', jwtTenantRoleClaim: null }],
    ['clerk', { jwtTenantClaim: 'o.slg', jwtTenantIdClaim: 'o.id', adminRoleClaim: 'roles', jwtTenantRoleClaim: 'o.rol' }],
    ['workos', { jwtTenantClaim: null, jwtTenantIdClaim: 'org_id', adminRoleClaim: 'roles', jwtTenantRoleClaim: 'role' }],
    ['entra', { jwtTenantClaim: null, jwtTenantIdClaim: 'tid', adminRoleClaim: 'roles', jwtTenantRoleClaim: null }],
    ['zitadel', { jwtTenantClaim: 'urn:zitadel:iam:user:resourceowner:name', jwtTenantIdClaim: 'urn:zitadel:iam:user:resourceowner:id', jwtTenantRoleClaim: null }],
    ['logto', { jwtTenantClaim: null, jwtTenantIdClaim: 'organizations', jwtTenantRoleClaim: null }],
  ])('%s sets its provider’s claims', (preset, expected) => {
    expect(loadConfig({ SERVICE_IDP_PRESET: preset })).toMatchObject({ idpPreset: preset, ...expected });
  });

  it('is case-insensitive; none set: no claim defaults', () => {
    expect(loadConfig({ SERVICE_IDP_PRESET: 'Clerk' }).idpPreset).toBe('clerk');
    expect(loadConfig({})).toMatchObject({ idpPreset: null, jwtTenantClaim: null, jwtTenantIdClaim: null, jwtTenantRoleClaim: null, adminRoleClaim: 'roles' });
  });

  it('an explicit variable wins over the preset', () => {
    expect(
      loadConfig({
        SERVICE_IDP_PRESET: 'keycloak',
        SERVICE_JWT_TENANT_CLAIM: 'tenant_alias',
        SERVICE_JWT_TENANT_ID_CLAIM: 'org.ids',
        SERVICE_ADMIN_ROLE_CLAIM: 'groups',
        SERVICE_JWT_TENANT_ROLE_CLAIM: 'org.role',
      }),
    ).toMatchObject({ jwtTenantClaim: 'tenant_alias', jwtTenantIdClaim: 'org.ids', adminRoleClaim: 'groups', jwtTenantRoleClaim: 'org.role' });
  });

  it('an unknown preset or a malformed claim path stops the boot, naming each variable', () => {
    expect(() => loadConfig({ SERVICE_IDP_PRESET: 'okta', SERVICE_JWT_TENANT_ID_CLAIM: 'a..b', SERVICE_JWT_TENANT_ROLE_CLAIM: '.role' })).toThrow(ConfigError);
    try {
      loadConfig({ SERVICE_IDP_PRESET: 'okta', SERVICE_JWT_TENANT_ID_CLAIM: 'a..b', SERVICE_JWT_TENANT_ROLE_CLAIM: '.role' });
    } catch (e) {
      const problems = (e as ConfigError).problems.join('\n');
      expect(problems).toContain("SERVICE_IDP_PRESET: expected one of keycloak, auth0, clerk, workos, entra, zitadel, logto, got 'okta'");
      expect(problems).toContain("SERVICE_JWT_TENANT_ID_CLAIM: 'a..b' is not a claim name or dot path");
      expect(problems).toContain("SERVICE_JWT_TENANT_ROLE_CLAIM: '.role' is not a claim name or dot path");
    }
  });
});
