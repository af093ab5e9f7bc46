/**
 * The instance's console settings, embedded by the service in the page as JSON
 * (`<script type="application/json" id="console-config">`, data the CSP lets through, never run).
 */
export interface ConsoleConfig {
  /** The OpenID provider the console signs in with (authorization code + PKCE), or null. */
  oidc: {
    issuer: string;
    clientId: string;
    scopes: string;
    /** SERVICE_CONSOLE_RESOURCE: sent as `resource` (RFC 8707) to the authorization and token endpoints. */
    resource: string | null;
    /** SERVICE_CONSOLE_AUDIENCE: sent as `audience` to the authorization endpoint (Auth0). */
    audience: string | null;
    /** True for the service's own provider (its built-in client): a token names one tenant, switching signs in again. */
    own?: boolean;
  } | null;
  /** SERVICE_AUTH_PROVIDER: `local` means sign-in links from `tenantctl console`. */
  authProvider: 'local' | 'jwt' | 'jwks' | 'oidc';
  multiTenantMode: boolean;
}

const FALLBACK: ConsoleConfig = { oidc: null, authProvider: 'local', multiTenantMode: true };

function read(): ConsoleConfig {
  const el = document.getElementById('console-config');
  if (!el?.textContent) return FALLBACK;
  try {
    return { ...FALLBACK, ...(JSON.parse(el.textContent) as Partial<ConsoleConfig>) };
  } catch {
    return FALLBACK;
  }
}

export const consoleConfig: ConsoleConfig = read();
