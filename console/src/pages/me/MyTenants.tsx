/**
 * Home: the caller's tenants (GET /api/tenants/mine), their role in each, and a switch between
 * them. After leaving a tenant (pages/tenant/Overview.tsx) the console lands here with `?left=<slug>`.
 */
import { ErrorNotice, SuccessNotice } from '../../components/ErrorNotice';
import { Loading, Page } from '../../components/Page';
import { Time } from '../../components/Time';
import { statusLabel } from '../../components/platform/tenant-forms';
import { JoinableTenants } from '../../components/tenant/JoinableTenants';
import { Link, navigate, useLocation } from '../../router';
import { useSession } from '../../session';

export default function MyTenants() {
  const s = useSession();
  const left = useLocation().query.get('left');
  return (
    <Page title="Your tenants" actions={<Link to="/register" className="button">Register an organization</Link>}>
      <SuccessNotice>{left ? `You left the tenant "${left}".` : null}</SuccessNotice>
      {s.myTenantsLoading ? <Loading what="your tenants" /> : null}
      <ErrorNotice error={s.myTenantsError} />
      {!s.myTenantsLoading && !s.myTenantsError && s.myTenants.length === 0 ? (
        <p>
          You are not a member of any tenant yet. <Link to="/register">Register an organization</Link>, or open the invitation link an admin sent you.
        </p>
      ) : null}
      {s.myTenants.length ? (
        <table>
          <caption className="visually-hidden">Tenants you belong to</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Slug</th>
              <th scope="col">Your role</th>
              <th scope="col">Status</th>
              <th scope="col">Joined</th>
              <th scope="col">
                <span className="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {s.myTenants.map((t) => {
              const current = t.slug === s.tenantSlug;
              return (
                <tr key={t.tenant_id}>
                  <td>{t.name}</td>
                  <td>
                    <code>{t.slug}</code>
                  </td>
                  <td>{t.role}</td>
                  <td>{statusLabel(t.status)}</td>
                  <td>
                    <Time value={t.joined_at} />
                  </td>
                  <td>
                    {current ? (
                      <span>Current tenant</span>
                    ) : (
                      <button
                        type="button"
                        aria-label={`Switch to ${t.name}`}
                        onClick={() => {
                          s.selectTenant(t.slug);
                          navigate('/tenant');
                        }}
                      >
                        Switch
                      </button>
                    )}
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      ) : null}
      {s.myTenants.some((t) => t.status === 'suspended' || t.status === 'pending_deletion') ? (
        <p className="hint">
          A suspended tenant (or one scheduled for deletion) keeps its data but cannot be used: every API call to it is refused with 403 Tenant
          suspended. Its admins can ask the operator of this service why.
        </p>
      ) : null}
      {s.myTenants.some((t) => t.status === 'pending_approval') ? (
        <p className="hint">A tenant waiting for approval cannot be used until a platform admin approves it. Its members are told the same by every API call.</p>
      ) : null}
      <JoinableTenants />
    </Page>
  );
}
