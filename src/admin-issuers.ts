/**
 * Which issuers may make a platform admin (SERVICE_ADMIN_ISSUER, docs/security.md#platform-admins):
 * with several accepted issuers (Entra ID's directories each have their own), an admin role
 * asserted by any of them would otherwise rule every tenant. Read by src/config/identity.ts.
 */
import type { AuthProvider } from './config/auth-provider';

/**
 * SERVICE_ADMIN_ISSUER: a comma list (or JSON array) of issuers, compared exactly with `iss`;
 * null when unset. An issuer with white space or control characters can match no token.
 */
export function adminIssuersOf(value: string | undefined, problems: string[]): string[] | null {
  if (value === undefined) return null;
  let items: unknown = value.split(',');
  if (value.startsWith('[')) {
    try {
      items = JSON.parse(value);
    } catch {
      items = null;
    }
  }
  if (!Array.isArray(items) || !items.every((i) => typeof i === 'string')) {
    problems.push('SERVICE_ADMIN_ISSUER: expected a comma-separated list or a JSON array of issuers');
    return null;
  }
  const out = [...new Set((items as string[]).map((i) => i.trim()).filter((i) => i !== ''))];
  // eslint-disable-next-line no-control-regex
  const bad = out.filter((i) => /[\s\u0000-\u001f\u007f]/.test(i) || Buffer.byteLength(i, 'utf8') > 1024);
  if (bad.length) problems.push(`SERVICE_ADMIN_ISSUER: '${bad[0]!.slice(0, 80)}' is not an issuer (no white space or control characters, at most 1 024 bytes)`);
  if (!out.length) problems.push('SERVICE_ADMIN_ISSUER: names no issuer');
  return out;
}

/**
 * The admin issuers when SERVICE_ADMIN_ISSUER is unset: SERVICE_JWT_ISSUER, else the issuer the
 * provider itself pins (the local key's, the OIDC issuer's). `jwt` and `jwks` accept whatever
 * `iss` their keys sign, so none is assumed for them.
 */
export function defaultAdminIssuers(provider: AuthProvider, jwtIssuer: string | null, oidcIssuer: string | null): string[] {
  if (jwtIssuer !== null) return [jwtIssuer];
  if (provider === 'local') return ['urn:tenant-service:local'];
  if (provider === 'oidc' && oidcIssuer !== null) return [oidcIssuer];
  return [];
}

/**
 * Why no token can be a platform admin under this configuration, as a sentence for the boot log
 * and setup status; null when some token can. Either no admin issuer is set or assumed, or the
 * verifier pins one issuer (SERVICE_JWT_ISSUER, the local or OIDC provider's) that
 * SERVICE_ADMIN_ISSUER does not name.
 */
export function noPlatformAdminReason(c: { authProvider: AuthProvider; adminIssuers: readonly string[]; jwtIssuer: string | null; oidcIssuer: string | null }): string | null {
  if (c.adminIssuers.length === 0) {
    return (
      `No token is a platform admin: the ${c.authProvider} provider accepts whatever issuer its keys sign, and neither SERVICE_ADMIN_ISSUER nor SERVICE_JWT_ISSUER is set. ` +
      'Set SERVICE_ADMIN_ISSUER to the issuer (or comma-separated issuers) whose tokens may carry the platform admin role.'
    );
  }
  // The one issuer every accepted token carries, when the verifier pins one.
  const pinned = defaultAdminIssuers(c.authProvider, c.jwtIssuer, c.oidcIssuer)[0];
  if (pinned !== undefined && !c.adminIssuers.includes(pinned)) {
    return `No token is a platform admin: every accepted token comes from issuer '${pinned}', which SERVICE_ADMIN_ISSUER does not name. Add it to SERVICE_ADMIN_ISSUER.`;
  }
  return null;
}
