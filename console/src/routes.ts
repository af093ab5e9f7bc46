/**
 * Every console page: its path, who may open it, and its component (loaded on first visit, so
 * the first page downloads only its own code; the sign-in page is part of the first download). The navigation and the access checks in App.tsx
 * both read this table.
 */
import { lazy, type ComponentType } from 'react';
import SignIn from './pages/SignIn';

/**
 * - `public`: no sign-in needed (the sign-in page, the OpenID callback);
 * - `signedIn`: anyone signed in (an invitation can be accepted before one has a tenant);
 * - `tenantMember` / `tenantAdmin`: the current tenant (the switch in the header) and a role in it;
 * - `platformAdmin`: the service's operators (GET /api/setup/status answers them).
 */
export type Access = 'public' | 'signedIn' | 'tenantMember' | 'tenantAdmin' | 'platformAdmin';

export interface RouteDef {
  path: string;
  title: string;
  access: Access;
  /** Shown in the navigation under this heading; absent for pages reached by a link. */
  nav?: 'You' | 'Tenant' | 'Platform';
  component: ComponentType<{ params: Record<string, string> }>;
}

export const ROUTES: RouteDef[] = [
  { path: '/', title: 'Your tenants', access: 'signedIn', nav: 'You', component: lazy(() => import('./pages/me/MyTenants')) },
  { path: '/register', title: 'Register an organization', access: 'signedIn', nav: 'You', component: lazy(() => import('./pages/me/Register')) },
  { path: '/invitations/accept', title: 'Accept an invitation', access: 'signedIn', component: lazy(() => import('./pages/me/AcceptInvitation')) },
  { path: '/signin', title: 'Sign in', access: 'public', component: SignIn },
  { path: '/callback', title: 'Signing in', access: 'public', component: lazy(() => import('./pages/Callback')) },

  { path: '/tenant', title: 'Tenant', access: 'tenantMember', nav: 'Tenant', component: lazy(() => import('./pages/tenant/Overview')) },
  { path: '/tenant/members', title: 'Members', access: 'tenantMember', nav: 'Tenant', component: lazy(() => import('./pages/tenant/Members')) },
  { path: '/tenant/invitations', title: 'Invitations', access: 'tenantAdmin', nav: 'Tenant', component: lazy(() => import('./pages/tenant/Invitations')) },
  { path: '/tenant/events', title: 'Tenant events', access: 'tenantAdmin', nav: 'Tenant', component: lazy(() => import('./pages/tenant/Events')) },

  { path: '/admin/tenants', title: 'All tenants', access: 'platformAdmin', nav: 'Platform', component: lazy(() => import('./pages/platform/Tenants')) },
  { path: '/admin/tenants/new', title: 'Create a tenant', access: 'platformAdmin', component: lazy(() => import('./pages/platform/NewTenant')) },
  { path: '/admin/tenants/:id', title: 'Tenant details', access: 'platformAdmin', component: lazy(() => import('./pages/platform/TenantDetail')) },
  { path: '/admin/audit', title: 'Isolation audit', access: 'platformAdmin', nav: 'Platform', component: lazy(() => import('./pages/platform/Audit')) },
  { path: '/admin/events', title: 'Event log', access: 'platformAdmin', nav: 'Platform', component: lazy(() => import('./pages/platform/Events')) },
  { path: '/admin/webhooks', title: 'Webhooks', access: 'platformAdmin', nav: 'Platform', component: lazy(() => import('./pages/platform/Webhooks')) },
  { path: '/admin/webhooks/:id', title: 'Webhook', access: 'platformAdmin', component: lazy(() => import('./pages/platform/WebhookDetail')) },
];
