/**
 * Sign-in with an OpenID provider: authorization code with PKCE, by oidc-client-ts. The state,
 * the code verifier and the resulting user live in this tab's sessionStorage; the access token
 * is what the console sends to the service as its bearer token. oidc-client-ts is loaded only
 * when the instance has an OpenID provider, so the local-provider console does not download it.
 * Nothing of the flow touches localStorage or a cookie of the console's origin.
 */
import type { UserManager } from 'oidc-client-ts';
import { consoleConfig } from './config';
import { BASE } from './router';

let manager: UserManager | null = null;

async function userManager(): Promise<UserManager | null> {
  const oidc = consoleConfig.oidc;
  if (!oidc) return null;
  if (manager) return manager;
  const { UserManager, WebStorageStateStore } = await import('oidc-client-ts');
  manager = new UserManager({
    authority: oidc.issuer,
    client_id: oidc.clientId,
    redirect_uri: `${window.location.origin}${BASE}/callback`,
    post_logout_redirect_uri: `${window.location.origin}${BASE}/`,
    response_type: 'code',
    scope: oidc.scopes,
    // What makes the provider issue an access token for this service (a JWT with its audience)
    // rather than one for its own userinfo endpoint: RFC 8707's `resource` on both requests,
    // Auth0's `audience` on the authorization request.
    extraQueryParams: {
      ...(oidc.resource ? { resource: oidc.resource } : {}),
      ...(oidc.audience ? { audience: oidc.audience } : {}),
    },
    extraTokenParams: oidc.resource ? { resource: oidc.resource } : {},
    userStore: new WebStorageStateStore({ store: window.sessionStorage }),
    stateStore: new WebStorageStateStore({ store: window.sessionStorage }),
    automaticSilentRenew: false,
    loadUserInfo: false,
    monitorSession: false,
  });
  return manager;
}

export function oidcAvailable(): boolean {
  return consoleConfig.oidc !== null;
}

/** Sends the browser to the provider's sign-in page; `returnTo` is the console path to come back to. */
export async function startOidcSignIn(returnTo: string, organization?: { slug: string; prompt: 'none' | 'login' }): Promise<void> {
  const m = await userManager();
  if (!m) throw new Error('No OpenID provider is configured for the console.');
  if (!organization) return m.signinRedirect({ state: { returnTo } });
  // The service's own provider: a token for another tenant (`organization`), first without a page
  // (prompt=none), then, when the provider needs the person, through its sign-in.
  const resource = consoleConfig.oidc?.resource;
  await m.signinRedirect({
    prompt: organization.prompt,
    extraQueryParams: { ...(resource ? { resource } : {}), organization: organization.slug },
    state: { returnTo, organization: organization.slug, prompt: organization.prompt },
  });
}

/** True when the console signs in through the service's own provider, whose tokens name one tenant. */
export function ownProvider(): boolean {
  return consoleConfig.oidc?.own === true;
}

/** The `tenant` claim (a slug) of an access token of the service's own provider, or null. */
export function tokenTenant(token: string): string | null {
  try {
    const part = token.split('.')[1] ?? '';
    const claims = JSON.parse(atob(part.replace(/-/g, '+').replace(/_/g, '/').padEnd(Math.ceil(part.length / 4) * 4, '='))) as { tenant?: unknown };
    return typeof claims.tenant === 'string' ? claims.tenant : null;
  } catch {
    return null;
  }
}

/** What the provider answers when prompt=none cannot be honoured without a page. */
const NEEDS_PAGE = new Set(['login_required', 'interaction_required', 'consent_required', 'account_selection_required']);

const safePath = (p: unknown) => (typeof p === 'string' && p.startsWith('/') && !p.startsWith('//') ? p : '/');

/**
 * Finishes the redirect at /console/callback: the access token and the path to return to; null
 * when a switch of organization went on to the provider's sign-in page (the browser is leaving).
 */
export async function completeOidcSignIn(): Promise<{ accessToken: string; returnTo: string } | null> {
  const m = await userManager();
  if (!m) throw new Error('No OpenID provider is configured for the console.');
  type Switch = { returnTo?: unknown; organization?: unknown; prompt?: unknown } | undefined;
  let user;
  try {
    user = await m.signinRedirectCallback();
  } catch (e) {
    // A switch without a page refused: the same switch, through the sign-in page.
    const { error, state } = e as { error?: unknown; state?: Switch };
    if (typeof error === 'string' && NEEDS_PAGE.has(error) && typeof state?.organization === 'string' && state.prompt === 'none') {
      await startOidcSignIn(safePath(state.returnTo), { slug: state.organization, prompt: 'login' });
      return null;
    }
    throw e;
  }
  const state = user.state as Switch;
  // The provider's session answered for the tenant it signed into before: sign in to the one asked for.
  if (typeof state?.organization === 'string' && state.prompt === 'none' && tokenTenant(user.access_token) !== state.organization) {
    await startOidcSignIn(safePath(state.returnTo), { slug: state.organization, prompt: 'login' });
    return null;
  }
  return { accessToken: user.access_token, returnTo: safePath(state?.returnTo) };
}

/**
 * Keeps the signed-in person's access token fresh: a minute before it expires, the refresh token
 * (when the provider issued one) buys a new one, handed to `onRenewed`. Without a refresh token,
 * or when the provider refuses, nothing happens and the sign-in ends at expiry with its notice.
 * Only the token this sign-in put in the session is renewed: a `tenantctl console` link opened
 * since then is left alone. Returns a function that stops watching.
 */
export function watchOidcRenewal(current: () => string | null, onRenewed: (accessToken: string) => void): () => void {
  let stopped = false;
  let unsubscribe: (() => void) | null = null;
  void userManager().then(async (m) => {
    if (!m || stopped) return;
    const expiring = async () => {
      const user = await m.getUser();
      if (!user?.refresh_token || user.access_token !== current()) return;
      try {
        const renewed = await m.signinSilent({ resource: consoleConfig.oidc?.resource ?? undefined });
        if (renewed && !stopped) onRenewed(renewed.access_token);
      } catch {
        // Refused or unreachable: the session's expiry timer signs out with its notice.
      }
    };
    unsubscribe = m.events.addAccessTokenExpiring(() => void expiring());
    // Loads the stored user's expiry timers (after a reload, too).
    await m.getUser();
  });
  return () => {
    stopped = true;
    unsubscribe?.();
  };
}

/**
 * Forgets the provider's tokens in this tab. With `atProvider`, a sign-in through the service's
 * own provider also ends the provider's session (RP-initiated logout: its confirmation page, then
 * back to the console); another provider's session is left as it is.
 */
export async function oidcSignOut(atProvider = false): Promise<void> {
  const m = await userManager();
  if (!m) return;
  const user = atProvider && ownProvider() ? await m.getUser() : null;
  if (user?.id_token) return m.signoutRedirect({ id_token_hint: user.id_token });
  await m.removeUser();
}
