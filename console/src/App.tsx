/**
 * The console's frame: a skip link, the header (who is signed in, the tenant switch, sign out),
 * the navigation for the person's roles, and the page of the current path, after its access
 * check. A page the person may not open shows a refusal that says why, never an empty screen.
 */
import { useEffect, useId, useState } from 'react';
import { ErrorNotice } from './components/ErrorNotice';
import { Loading } from './components/Page';
import { Refusal } from './components/Refusal';
import { Link, matchPath, navigate, useLocation } from './router';
import { localProblem } from './api';
import { ROUTES, type RouteDef } from './routes';
import { useSession, type Session } from './session';
import SignIn from './pages/SignIn';
import NotFound from './pages/NotFound';

function findRoute(path: string): { route: RouteDef; params: Record<string, string> } | null {
  for (const route of ROUTES) {
    const params = matchPath(route.path, path);
    if (params) return { route, params };
  }
  return null;
}

/** Why `route` is closed to this session, or null when it is open (undefined: still finding out). */
function refusal(route: RouteDef, s: Session): string | null | undefined {
  switch (route.access) {
    case 'public':
    case 'signedIn':
      return null;
    case 'platformAdmin':
      if (s.isPlatformAdmin === null) return undefined;
      return s.isPlatformAdmin ? null : 'this page is for platform admins, and your sign-in does not carry the platform admin role.';
    case 'tenantMember':
      if (s.myTenantsLoading) return undefined;
      if (!s.tenantSlug) return 'choose a tenant first, with the tenant switch at the top of the page.';
      if (!s.currentTenant) return `you are not a member of the tenant "${s.tenantSlug}". Choose one of your tenants with the switch at the top of the page.`;
      if (route.permission && !s.holds(route.permission)) {
        return `this page needs the permission ${route.permission} in "${s.currentTenant.name}", and your role there (${s.currentTenant.role}) does not hold it. Ask one of its admins to change your role.`;
      }
      return null;
  }
}

function TenantSwitch() {
  const s = useSession();
  const id = useId();
  if (s.myTenants.length === 0) return null;
  return (
    <div className="tenant-switch">
      <label htmlFor={id}>Tenant</label>
      <select
        id={id}
        value={s.currentTenant ? s.tenantSlug ?? '' : ''}
        onChange={(e) => {
          s.selectTenant(e.target.value);
          navigate('/tenant');
        }}
      >
        {s.currentTenant ? null : (
          <option value="" disabled>
            Choose a tenant
          </option>
        )}
        {s.myTenants.map((t) => (
          <option key={t.tenant_id} value={t.slug}>
            {t.name} ({t.role})
          </option>
        ))}
      </select>
    </div>
  );
}

function Navigation() {
  const s = useSession();
  const groups: Array<{ heading: 'You' | 'Tenant' | 'Platform'; routes: RouteDef[] }> = [];
  for (const heading of ['You', 'Tenant', 'Platform'] as const) {
    const routes = ROUTES.filter((r) => r.nav === heading && refusal(r, s) === null);
    if (routes.length) groups.push({ heading, routes });
  }
  return (
    <nav className="side-nav" aria-label="Console">
      {groups.map((g) => (
        <div key={g.heading}>
          <h2>{g.heading === 'Tenant' && s.currentTenant ? s.currentTenant.name : g.heading}</h2>
          <ul>
            {g.routes.map((r) => (
              <li key={r.path}>
                <Link to={r.path}>{r.title}</Link>
              </li>
            ))}
          </ul>
        </div>
      ))}
    </nav>
  );
}

function Header() {
  const s = useSession();
  const who = s.identity ? s.identity.email ?? s.identity.name ?? s.identity.subject : null;
  return (
    <header className="top-bar">
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      <Link to="/" className="brand">
        tenant-service
      </Link>
      {s.token ? (
        <>
          <TenantSwitch />
          <div className="who">
            <span>
              Signed in as <strong>{who}</strong>
              {s.isPlatformAdmin ? ' (platform admin)' : ''}
            </span>
            <button type="button" onClick={() => s.signOut()}>
              Sign out
            </button>
          </div>
        </>
      ) : null}
    </header>
  );
}

function Content() {
  const s = useSession();
  const loc = useLocation();
  const found = findRoute(loc.path);
  const page = found?.route.page;
  const [, pageArrived] = useState(0);
  const [loadFailed, setLoadFailed] = useState(false);
  // The page's code downloads while the access check's request is in flight.
  useEffect(() => {
    setLoadFailed(false);
    if (!page || page.loaded()) return;
    let live = true;
    page.load().then(
      () => live && pageArrived((n) => n + 1),
      () => live && setLoadFailed(true),
    );
    return () => {
      live = false;
    };
  }, [page]);
  if (!found) return <NotFound />;
  const { route, params } = found;
  if (route.access !== 'public' && !s.token) return s.signingIn ? <Loading what="your sign-in" /> : <SignIn />;
  const why = refusal(route, s);
  if (why === undefined) return <Loading what={route.title.toLowerCase()} />;
  if (why !== null) return <Refusal title={route.title} reason={why} />;
  const Component = route.page.loaded();
  if (Component) return <Component params={params} />;
  if (loadFailed) return <ErrorNotice error={localProblem('Page not loaded', 'This page could not be downloaded. Check your connection and reload the page.')} />;
  return <Loading what={route.title.toLowerCase()} />;
}

export function App() {
  const s = useSession();
  return (
    <>
      <Header />
      <div className={s.token ? 'layout' : 'layout layout-signed-out'}>
        {s.token ? <Navigation /> : null}
        <main id="main" tabIndex={-1}>
          <Content />
        </main>
      </div>
    </>
  );
}
