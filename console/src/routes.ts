/**
 * Every console page: its path, who may open it, and its component (loaded on first visit, so
 * the first page downloads only its own code; the sign-in page is part of the first download). The navigation and the access checks in App.tsx
 * both read this table.
 */
import type { ComponentType } from 'react';
import type { SystemPermission } from '@service/context/permissions';
import SignIn from './pages/SignIn';

/**
 * - `public`: no sign-in needed (the sign-in page, the OpenID callback);
 * - `signedIn`: anyone signed in (an invitation can be accepted before one has a tenant);
 * - `tenantMember`: the current tenant (the switch in the header) and a role in it; with
 *   `permission`, a role holding that system permission (the one the page's operations declare
 *   in openapi.yaml as `x-permission`);
 * - `platformAdmin`: the service's operators (GET /api/setup/status answers them).
 */
export type Access = 'public' | 'signedIn' | 'tenantMember' | 'platformAdmin';

export interface RouteDef {
  path: string;
  title: string;
  access: Access;
  /** For a tenant page: the system permission the current tenant's role must hold to see it. */
  permission?: SystemPermission;
  /** Shown in the navigation under this heading; absent for pages reached by a link. */
  nav?: 'You' | 'Tenant' | 'Platform';
  page: PageModule;
}

export type PageComponent = ComponentType<{ params: Record<string, string> }>;

/**
 * A page's code, loaded on first need. App.tsx starts loading it as soon as the path matches (in
 * parallel with the access check's request) and renders it directly once it is there: no
 * Suspense boundary, whose fallback React holds for 300 ms before revealing the page.
 */
export interface PageModule {
  /** The component once loaded. */
  loaded(): PageComponent | undefined;
  /** Starts loading (once); resolves when the component is there. */
  load(): Promise<PageComponent>;
}

function lazyPage(importer: () => Promise<{ default: PageComponent }>): PageModule {
  let component: PageComponent | undefined;
  let promise: Promise<PageComponent> | null = null;
  return {
    loaded: () => component,
    load() {
      promise ??= importer().then(
        (m) => (component = m.default),
        (e: unknown) => {
          promise = null; // a failed download may be retried by the next visit
          throw e;
        },
      );
      return promise;
    },
  };
}

function readyPage(component: PageComponent): PageModule {
  return { loaded: () => component, load: () => Promise.resolve(component) };
}

export const ROUTES: RouteDef[] = [
  { path: '/', title: 'Your tenants', access: 'signedIn', nav: 'You', page: lazyPage(() => import('./pages/me/MyTenants')) },
  { path: '/register', title: 'Register an organization', access: 'signedIn', nav: 'You', page: lazyPage(() => import('./pages/me/Register')) },
  { path: '/invitations/accept', title: 'Accept an invitation', access: 'signedIn', page: lazyPage(() => import('./pages/me/AcceptInvitation')) },
  { path: '/signin', title: 'Sign in', access: 'public', page: readyPage(SignIn) },
  { path: '/callback', title: 'Signing in', access: 'public', page: lazyPage(() => import('./pages/Callback')) },

  { path: '/tenant', title: 'Tenant', access: 'tenantMember', nav: 'Tenant', page: lazyPage(() => import('./pages/tenant/Overview')) },
  { path: '/tenant/members', title: 'Members', access: 'tenantMember', permission: 'tenant:members:read', nav: 'Tenant', page: lazyPage(() => import('./pages/tenant/Members')) },
  { path: '/tenant/roles', title: 'Roles', access: 'tenantMember', permission: 'tenant:roles:write', nav: 'Tenant', page: lazyPage(() => import('./pages/tenant/Roles')) },
  { path: '/tenant/invitations', title: 'Invitations', access: 'tenantMember', permission: 'tenant:invitations:write', nav: 'Tenant', page: lazyPage(() => import('./pages/tenant/Invitations')) },
  { path: '/tenant/events', title: 'Tenant events', access: 'tenantMember', permission: 'tenant:events:read', nav: 'Tenant', page: lazyPage(() => import('./pages/tenant/Events')) },
  { path: '/tenant/directory', title: 'Directory', access: 'tenantMember', permission: 'tenant:directory:manage', nav: 'Tenant', page: lazyPage(() => import('./pages/tenant/Directory')) },
  { path: '/tenant/domains', title: 'Domains', access: 'tenantMember', permission: 'tenant:domains:manage', nav: 'Tenant', page: lazyPage(() => import('./pages/tenant/Domains')) },
  { path: '/tenant/sso', title: 'Single sign-on', access: 'tenantMember', permission: 'tenant:sso:manage', nav: 'Tenant', page: lazyPage(() => import('./pages/tenant/Sso')) },

  { path: '/admin/tenants', title: 'All tenants', access: 'platformAdmin', nav: 'Platform', page: lazyPage(() => import('./pages/platform/Tenants')) },
  { path: '/admin/tenants/new', title: 'Create a tenant', access: 'platformAdmin', page: lazyPage(() => import('./pages/platform/NewTenant')) },
  { path: '/admin/tenants/:id', title: 'Tenant details', access: 'platformAdmin', page: lazyPage(() => import('./pages/platform/TenantDetail')) },
  { path: '/admin/audit', title: 'Isolation audit', access: 'platformAdmin', nav: 'Platform', page: lazyPage(() => import('./pages/platform/Audit')) },
  { path: '/admin/events', title: 'Event log', access: 'platformAdmin', nav: 'Platform', page: lazyPage(() => import('./pages/platform/Events')) },
  { path: '/admin/permissions', title: 'Permissions', access: 'platformAdmin', nav: 'Platform', page: lazyPage(() => import('./pages/platform/Permissions')) },
  { path: '/admin/roles', title: 'Platform roles', access: 'platformAdmin', nav: 'Platform', page: lazyPage(() => import('./pages/platform/Roles')) },
  { path: '/admin/webhooks', title: 'Webhooks', access: 'platformAdmin', nav: 'Platform', page: lazyPage(() => import('./pages/platform/Webhooks')) },
  { path: '/admin/webhooks/:id', title: 'Webhook', access: 'platformAdmin', page: lazyPage(() => import('./pages/platform/WebhookDetail')) },
  { path: '/admin/applications', title: 'Applications', access: 'platformAdmin', nav: 'Platform', page: lazyPage(() => import('./pages/platform/Applications')) },
  { path: '/admin/applications/:id', title: 'Application', access: 'platformAdmin', page: lazyPage(() => import('./pages/platform/ApplicationDetail')) },
];
