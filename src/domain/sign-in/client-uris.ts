/**
 * The rules a client's redirect URIs keep (docs/sign-in.md#clients): absolute, no fragment, no
 * user name or password; `https:`, or `http:` only on a loopback host (127.0.0.0/8, [::1],
 * `localhost`); a private-use scheme with a dot (`com.example.app:/callback`) only for public
 * clients (native apps, which hold no secret). They are matched exactly by the provider.
 */
import type { OidcClient } from '../../context/sign-in';
import { ApiError } from '../../errors';

export const MAX_REDIRECT_URIS = 20;
export const MAX_REDIRECT_URI_LENGTH = 2000;

/** A private-use URI scheme (reverse domain name of the app's owner): letters, digits, `+-.`, at least one dot. */
const PRIVATE_USE_SCHEME = /^[a-z][a-z0-9+-]*(\.[a-z0-9+-]+)+:$/;

function isLoopbackHost(hostname: string): boolean {
  return hostname === 'localhost' || hostname === '[::1]' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(hostname);
}

/** Why `raw` is not an acceptable redirect URI for a client of `type`; null when it is. */
export function redirectUriProblem(raw: string, type: OidcClient['type']): string | null {
  if (raw.length > MAX_REDIRECT_URI_LENGTH) return `is longer than ${MAX_REDIRECT_URI_LENGTH} characters`;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'is not an absolute URL';
  }
  if (raw.includes('#')) return 'has a fragment (#…), which a redirect URI may not have';
  if (url.username !== '' || url.password !== '') return 'carries a user name or password';
  if (url.protocol === 'https:') return url.hostname === '' ? 'has no host' : null;
  if (url.protocol === 'http:') return isLoopbackHost(url.hostname) ? null : 'uses http: on a host that is not loopback (127.0.0.0/8, [::1], localhost); use https:';
  if (PRIVATE_USE_SCHEME.test(url.protocol)) {
    return type === 'public' ? null : `uses the custom scheme '${url.protocol}', which only public clients (native apps) may use`;
  }
  return `uses the scheme '${url.protocol}'; use https:, http: on a loopback host, or (public clients) a private-use scheme such as com.example.app:`;
}

/**
 * Checks a list of redirect URIs (`field` names it in the 400's detail, e.g. `body.redirect_uris`):
 * each acceptable, at most 20, no duplicates, at least `min`. Returns the list as given.
 */
export function checkRedirectUris(field: string, uris: readonly string[], type: OidcClient['type'], min: number): string[] {
  if (uris.length < min) throw new ApiError('validation', `${field} must list at least ${min} URI.`);
  if (uris.length > MAX_REDIRECT_URIS) throw new ApiError('validation', `${field} lists ${uris.length} URIs; at most ${MAX_REDIRECT_URIS}.`);
  const seen = new Set<string>();
  uris.forEach((uri, i) => {
    const problem = redirectUriProblem(uri, type);
    if (problem) throw new ApiError('validation', `${field}[${i}] ${problem}.`);
    if (seen.has(uri)) throw new ApiError('validation', `${field}[${i}] repeats '${uri}'.`);
    seen.add(uri);
  });
  return [...uris];
}

/** A client's name: 1–200 characters, not only spaces (trimmed). */
export function checkClientName(field: string, name: string): string {
  const trimmed = name.trim();
  if (trimmed.length < 1 || trimmed.length > 200) throw new ApiError('validation', `${field} must be 1 to 200 characters (not only spaces).`);
  return trimmed;
}

/**
 * What oidc-provider calls the client's application type: `native` when a redirect URI uses a
 * private-use scheme (only public clients may), else `web`.
 */
export function applicationType(client: Pick<OidcClient, 'redirect_uris'>): 'web' | 'native' {
  return client.redirect_uris.some((u) => !u.startsWith('https:') && !u.startsWith('http:')) ? 'native' : 'web';
}
