/**
 * Identity provider presets (docs/identity-providers.md#presets): SERVICE_IDP_PRESET sets the
 * defaults of the claim variables to the token shape each provider documents. An explicit variable
 * still wins.
 */
export const IDP_PRESETS = {
  // Keycloak 26 `organization` scope: an array of aliases, or with the mapper's "add
  // organization id" option a map {"alias": {"id": "…"}}; realm roles in realm_access.roles.
  keycloak: { tenantClaim: 'organization', tenantIdClaim: 'organization', adminRoleClaim: 'realm_access.roles' },
  // Auth0 Organizations: org_id always, org_name with "organization names in tokens".
  auth0: { tenantClaim: 'org_name', tenantIdClaim: 'org_id' },
  // Clerk session token v2: o: {id, slg, rol, per}.
  clerk: { tenantClaim: 'o.slg', tenantIdClaim: 'o.id', tenantRoleClaim: 'o.rol' },
  // WorkOS AuthKit access token: org_id, with the member's role in `role`.
  workos: { tenantIdClaim: 'org_id', tenantRoleClaim: 'role' },
  // Microsoft Entra ID: the directory (tenant) id in `tid`, app roles in `roles`.
  entra: { tenantIdClaim: 'tid', adminRoleClaim: 'roles' },
  // Zitadel with the urn:zitadel:iam:user:resourceowner scope.
  zitadel: { tenantClaim: 'urn:zitadel:iam:user:resourceowner:name', tenantIdClaim: 'urn:zitadel:iam:user:resourceowner:id' },
  // Logto with the `urn:logto:scope:organizations` scope: `organizations`, an array of ids.
  logto: { tenantIdClaim: 'organizations' },
} as const satisfies Record<string, { tenantClaim?: string; tenantIdClaim?: string; adminRoleClaim?: string; tenantRoleClaim?: string }>;

export type IdpPreset = keyof typeof IDP_PRESETS;

export function isIdpPreset(name: string): name is IdpPreset {
  return Object.prototype.hasOwnProperty.call(IDP_PRESETS, name);
}
