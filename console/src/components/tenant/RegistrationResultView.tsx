/** What a registration produced (RegistrationResult): active and ready, or waiting for approval. */
import type { RegistrationResult } from '@generated/types.gen';
import { SuccessNotice } from '../ErrorNotice';
import { Link } from '../../router';

export function RegistrationResultView({ result }: { result: RegistrationResult }) {
  const pending = result.status === 'pending_approval';
  return (
    <SuccessNotice>
      {pending ? (
        <>
          <p>
            <strong>{result.organization_name}</strong> is registered and <strong>waiting for approval</strong>. A platform admin of this service
            must approve it before anyone can use it; until then every request for it is refused with "Tenant pending approval".
          </p>
          <p>You are its admin: once it is approved it appears as active under your tenants, and you can switch to it there.</p>
        </>
      ) : (
        <>
          <p>
            <strong>{result.organization_name}</strong> is registered, you are its admin, and it is now your current tenant.
          </p>
          <p>
            <Link to="/tenant">Open {result.organization_name}</Link> or <Link to="/tenant/invitations">invite people</Link>.
          </p>
        </>
      )}
      <dl className="facts">
        <dt>Slug</dt>
        <dd>
          <code>{result.tenant_slug}</code>
        </dd>
        <dt>Status</dt>
        <dd>{pending ? 'Waiting for approval' : 'Active'}</dd>
        <dt>API header</dt>
        <dd>
          <code>{result.api_access.tenant_header}</code>
        </dd>
      </dl>
      <p className="hint">{result.admin_instructions}</p>
    </SuccessNotice>
  );
}
