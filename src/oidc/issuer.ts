/**
 * Where the service's own OpenID provider lives (docs/sign-in.md#the-provider): its issuer is
 * exactly `<SERVICE_PUBLIC_URL>/oidc` (the tenant-token issuer when SERVICE_PUBLIC_URL is unset,
 * as for the SCIM base URL), and its access tokens are for the service's API. Pure: imports
 * nothing but the config's base URL, so the token verifier may read it.
 */
import { serviceBaseUrl, type Config } from '../config';

/** The path the provider is served under, on every instance. */
export const OIDC_MOUNT_PATH = '/oidc';

/** The provider's issuer: `<SERVICE_PUBLIC_URL>/oidc`. */
export function oidcIssuer(config: Pick<Config, 'publicUrl' | 'tenantTokenIssuer'>): string {
  return `${serviceBaseUrl(config)}${OIDC_MOUNT_PATH}`;
}

/** The audience of the provider's access tokens: the service's API, `<SERVICE_PUBLIC_URL>/api`. */
export function oidcApiAudience(config: Pick<Config, 'publicUrl' | 'tenantTokenIssuer'>): string {
  return `${serviceBaseUrl(config)}/api`;
}
