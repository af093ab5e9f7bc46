/**
 * Who is signed in and which tenant the console works on.
 *
 * The bearer token lives in this tab's sessionStorage (never localStorage, never a cookie): a
 * reload keeps it, closing the tab or signing out forgets it. It arrives either by exchanging the
 * one-time code of a `tenantctl console` link (console/src/sign-in-link.ts) or from the OpenID
 * provider's PKCE flow (console/src/oidc.ts). The current tenant's slug is kept beside it and sent as `X-Tenant` on
 * the tenant-scoped calls.
 *
 * What the person may do is never guessed from the token's claims: platform admin is "the
 * service answered GET /api/setup/status", tenant admin is the role /api/tenants/mine reports.
 */
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { createContext, useCallback, useContext, useEffect, useMemo, useState, type ReactNode } from 'react';
import { getSetupStatusOptions, listMyTenantsOptions } from '@generated/@tanstack/react-query.gen';
import type { MyTenant } from '@generated/types.gen';
import type { SystemPermission } from '@service/context/permissions';
import { configureApi, type ApiProblem } from './api';
import { oidcAvailable, oidcSignOut, ownProvider, startOidcSignIn, tokenTenant, watchOidcRenewal } from './oidc';
import { useSignInLinkExchange } from './sign-in-link';

const TOKEN_KEY = 'tenant-service.console.token';
const TENANT_KEY = 'tenant-service.console.tenant';
const NOTICE_KEY = 'tenant-service.console.notice';
const SLUG = /^[a-z0-9-]{1,255}$/;

/** The claims the console shows (display only: the service decides what a token may do). */
export interface Identity {
  subject: string;
  issuer: string;
  email: string | null;
  name: string | null;
  /** Seconds since the epoch; null when the token carries no `exp`. */
  expiresAt: number | null;
}

export function decodeIdentity(token: string): Identity | null {
  const part = token.split('.')[1];
  if (!part) return null;
  try {
    const json = atob(part.replace(/-/g, '+').replace(/_/g, '/').padEnd(Math.ceil(part.length / 4) * 4, '='));
    const claims = JSON.parse(new TextDecoder().decode(Uint8Array.from(json, (c) => c.charCodeAt(0)))) as Record<string, unknown>;
    if (typeof claims.sub !== 'string') return null;
    return {
      subject: claims.sub,
      issuer: typeof claims.iss === 'string' ? claims.iss : '',
      email: typeof claims.email === 'string' ? claims.email : null,
      name: typeof claims.name === 'string' ? claims.name : typeof claims.preferred_username === 'string' ? claims.preferred_username : null,
      expiresAt: typeof claims.exp === 'number' ? claims.exp : null,
    };
  } catch {
    return null;
  }
}

/**
 * The home page with `?tenant=<slug>` (a registration's `dashboard_url` when
 * SERVICE_FRONTEND_BASE_URL points at the console) selects that tenant, then drops the query.
 */
export function adoptTenantQuery(): void {
  const { pathname, search } = window.location;
  if (pathname !== '/console' && pathname !== '/console/') return;
  const params = new URLSearchParams(search);
  const tenant = params.get('tenant');
  if (tenant === null) return;
  if (SLUG.test(tenant)) sessionStorage.setItem(TENANT_KEY, tenant);
  params.delete('tenant');
  const rest = params.toString();
  window.history.replaceState(null, '', `${pathname}${rest ? `?${rest}` : ''}${window.location.hash}`);
}

/**
 * Stores a token obtained by the OpenID sign-in (console/src/oidc.ts). A token of the service's
 * own provider names its tenant: the console works on that one.
 */
export function storeToken(token: string): void {
  sessionStorage.setItem(TOKEN_KEY, token);
  const tenant = ownProvider() ? tokenTenant(token) : null;
  if (tenant !== null && SLUG.test(tenant)) sessionStorage.setItem(TENANT_KEY, tenant);
}

/** A message to show once on the sign-in page (an expired sign-in, a broken link). */
export function takeNotice(): string | null {
  const n = sessionStorage.getItem(NOTICE_KEY);
  if (n !== null) sessionStorage.removeItem(NOTICE_KEY);
  return n;
}

/** The message takeNotice would return, left in place (read during render, taken in an effect). */
export function peekNotice(): string | null {
  return sessionStorage.getItem(NOTICE_KEY);
}

export function setNotice(message: string): void {
  sessionStorage.setItem(NOTICE_KEY, message);
}

export interface Session {
  token: string | null;
  /** True while a sign-in link's code is being exchanged. */
  signingIn: boolean;
  identity: Identity | null;
  /** Slug of the tenant the console works on (sent as X-Tenant), or null before one is chosen. */
  tenantSlug: string | null;
  /** The caller's tenants, from GET /api/tenants/mine (empty while loading). */
  myTenants: MyTenant[];
  myTenantsLoading: boolean;
  myTenantsError: ApiProblem | null;
  /** The caller's membership of the current tenant, when they have one. */
  currentTenant: MyTenant | null;
  /** True once GET /api/setup/status answered 200; false when it answered 403; null while unknown. */
  isPlatformAdmin: boolean | null;
  /** Whether the caller's role in the current tenant holds this system permission (what the service checks). */
  holds(permission: SystemPermission): boolean;
  /** `{ 'X-Tenant': slug }` for tenant-scoped calls. */
  tenantHeaders: { 'X-Tenant': string } | undefined;
  selectTenant(slug: string): void;
  signOut(message?: string): void;
}

const SessionContext = createContext<Session | null>(null);

export function useSession(): Session {
  const s = useContext(SessionContext);
  if (!s) throw new Error('useSession outside SessionProvider');
  return s;
}

export function SessionProvider({ children }: { children: ReactNode }) {
  const queryClient = useQueryClient();
  const [token, setToken] = useState<string | null>(() => sessionStorage.getItem(TOKEN_KEY));
  const [tenantSlug, setTenantSlug] = useState<string | null>(() => sessionStorage.getItem(TENANT_KEY));

  const signOut = useCallback(
    (message?: string) => {
      sessionStorage.removeItem(TOKEN_KEY);
      sessionStorage.removeItem(TENANT_KEY);
      if (message) setNotice(message);
      queryClient.clear();
      setToken(null);
      setTenantSlug(null);
      // Signing out by hand also ends the own provider's session; an expiry only forgets the tokens here.
      void oidcSignOut(message === undefined);
    },
    [queryClient],
  );

  // Configured during render, before any child query runs with the token.
  configureApi({
    token: () => sessionStorage.getItem(TOKEN_KEY),
    onUnauthorized: () => signOut('Your sign-in has expired or was not accepted. Sign in again.'),
  });

  // Another tab signing in or out does not touch this tab (sessionStorage is per tab), but the
  // OpenID sign-in stores a token in this tab and tells us.
  useEffect(() => {
    const onToken = () => {
      queryClient.clear();
      setToken(sessionStorage.getItem(TOKEN_KEY));
      setTenantSlug(sessionStorage.getItem(TENANT_KEY));
    };
    window.addEventListener('tenant-service:token', onToken);
    return () => window.removeEventListener('tenant-service:token', onToken);
  }, [queryClient]);

  // A `tenantctl console` link: its code, exchanged once, replaces whoever is signed in here; a
  // code the service refuses signs this tab out, and the sign-in page says why.
  const signingIn = useSignInLinkExchange(
    (linkToken, tenant) => {
      queryClient.clear();
      storeToken(linkToken);
      if (tenant) sessionStorage.setItem(TENANT_KEY, tenant);
      else sessionStorage.removeItem(TENANT_KEY);
      setToken(linkToken);
      setTenantSlug(tenant);
    },
    (notice) => signOut(notice),
  );

  const identity = useMemo(() => (token ? decodeIdentity(token) : null), [token]);

  // An OpenID sign-in renews its access token with the refresh token before it expires; the new
  // token replaces the old one without clearing what the console has loaded.
  const signedIn = token !== null;
  useEffect(() => {
    if (!signedIn || !oidcAvailable()) return;
    return watchOidcRenewal(
      () => sessionStorage.getItem(TOKEN_KEY),
      (renewed) => {
        storeToken(renewed);
        setToken(renewed);
      },
    );
  }, [signedIn]);

  // Sign out when the token expires, instead of failing the next click with a 401.
  useEffect(() => {
    if (!identity?.expiresAt) return;
    const ms = identity.expiresAt * 1000 - Date.now();
    const t = window.setTimeout(() => signOut('Your sign-in has expired. Sign in again.'), Math.max(0, Math.min(ms, 2 ** 31 - 1)));
    return () => window.clearTimeout(t);
  }, [identity, signOut]);

  const mine = useQuery({ ...listMyTenantsOptions(), enabled: token !== null, staleTime: 30_000 });
  const setup = useQuery({ ...getSetupStatusOptions(), enabled: token !== null, staleTime: 60_000, retry: false });
  const setupProblem = setup.error as ApiProblem | null;
  const isPlatformAdmin = token === null ? false : setup.isSuccess ? true : setupProblem && setupProblem.status === 403 ? false : setup.isError ? false : null;

  const myTenants = useMemo(() => mine.data?.tenants ?? [], [mine.data]);
  // The first tenant is chosen only when the caller has exactly one: with several, they pick.
  useEffect(() => {
    if (tenantSlug === null && myTenants.length === 1) {
      sessionStorage.setItem(TENANT_KEY, myTenants[0].slug);
      setTenantSlug(myTenants[0].slug);
    }
  }, [tenantSlug, myTenants]);

  const selectTenant = useCallback((slug: string) => {
    // A token of the service's own provider is for one tenant: another one takes a new token.
    const current = sessionStorage.getItem(TOKEN_KEY);
    const bound = current !== null && ownProvider() ? tokenTenant(current) : null;
    if (bound !== null && bound !== slug) {
      void startOidcSignIn('/tenant', { slug, prompt: 'none' });
      return;
    }
    sessionStorage.setItem(TENANT_KEY, slug);
    setTenantSlug(slug);
  }, []);

  const currentTenant = myTenants.find((t) => t.slug === tenantSlug) ?? null;
  const value: Session = {
    token,
    signingIn,
    identity,
    tenantSlug,
    myTenants,
    myTenantsLoading: token !== null && mine.isPending,
    myTenantsError: (mine.error as ApiProblem | null) ?? null,
    currentTenant,
    isPlatformAdmin,
    holds: (permission: SystemPermission) => currentTenant?.permissions.includes(permission) ?? false,
    tenantHeaders: tenantSlug ? { 'X-Tenant': tenantSlug } : undefined,
    selectTenant,
    signOut,
  };
  return <SessionContext.Provider value={value}>{children}</SessionContext.Provider>;
}
