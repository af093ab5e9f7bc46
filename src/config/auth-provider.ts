/**
 * The token providers (SERVICE_AUTH_PROVIDER, docs/configuration.md): a module of its own, read by
 * ./identity.ts and by src/admin-issuers.ts, which ./identity.ts itself reads.
 */
export type AuthProvider = 'local' | 'jwt' | 'jwks' | 'oidc';
