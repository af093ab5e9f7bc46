/**
 * A small history-API router for the console's handful of pages: paths under /console, a
 * pattern table with `:params`, and links that are real <a href> elements (so open-in-new-tab,
 * middle click and the keyboard behave as on any page).
 */
import { createContext, useContext, useEffect, useState, type AnchorHTMLAttributes, type MouseEvent, type ReactNode } from 'react';

export const BASE = '/console';

export interface Location {
  /** The path below /console, always starting with '/' ('/' is the console's home). */
  path: string;
  query: URLSearchParams;
}

function readLocation(): Location {
  const p = window.location.pathname;
  const path = p === BASE ? '/' : p.startsWith(`${BASE}/`) ? p.slice(BASE.length) || '/' : '/';
  return { path, query: new URLSearchParams(window.location.search) };
}

const listeners = new Set<() => void>();
window.addEventListener('popstate', () => listeners.forEach((l) => l()));

/** Goes to a console path ('/tenant/members', '/admin/tenants?q=acme'). */
export function navigate(to: string, opts: { replace?: boolean } = {}): void {
  const url = `${BASE}${to.startsWith('/') ? to : `/${to}`}`;
  if (opts.replace) window.history.replaceState(null, '', url);
  else window.history.pushState(null, '', url);
  listeners.forEach((l) => l());
  if (!opts.replace) window.scrollTo(0, 0);
}

const LocationContext = createContext<Location>(readLocation());

export function RouterProvider({ children }: { children: ReactNode }) {
  const [location, setLocation] = useState(readLocation);
  useEffect(() => {
    const l = () => setLocation(readLocation());
    listeners.add(l);
    return () => void listeners.delete(l);
  }, []);
  return <LocationContext.Provider value={location}>{children}</LocationContext.Provider>;
}

export function useLocation(): Location {
  return useContext(LocationContext);
}

/** Matches '/admin/tenants/:id' against a path; the params, or null. */
export function matchPath(pattern: string, path: string): Record<string, string> | null {
  const a = pattern.split('/').filter(Boolean);
  const b = path.split('/').filter(Boolean);
  if (a.length !== b.length) return null;
  const params: Record<string, string> = {};
  for (let i = 0; i < a.length; i++) {
    if (a[i].startsWith(':')) {
      try {
        params[a[i].slice(1)] = decodeURIComponent(b[i]);
      } catch {
        return null;
      }
    } else if (a[i] !== b[i]) return null;
  }
  return params;
}

type LinkProps = Omit<AnchorHTMLAttributes<HTMLAnchorElement>, 'href'> & { to: string };

/** An <a> to a console path that navigates without a reload (a modified click opens normally). */
export function Link({ to, onClick, children, ...rest }: LinkProps) {
  const loc = useLocation();
  const current = to === loc.path ? { 'aria-current': 'page' as const } : {};
  function click(e: MouseEvent<HTMLAnchorElement>) {
    onClick?.(e);
    if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
    e.preventDefault();
    navigate(to);
  }
  return (
    <a href={`${BASE}${to}`} onClick={click} {...current} {...rest}>
      {children}
    </a>
  );
}
