/**
 * Platform admins: one application (docs/sign-in.md#clients): its client ID, type and redirect
 * URIs, the form that edits them, a new secret for a confidential one (shown once), and delete.
 * Operations: getOidcClient, updateOidcClient, deleteOidcClient.
 */
import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { getOidcClientOptions } from '@generated/@tanstack/react-query.gen';
import type { CreatedOidcClient } from '@generated/types.gen';
import { ErrorNotice, SuccessNotice } from '../../components/ErrorNotice';
import { Loading, Page } from '../../components/Page';
import { Time } from '../../components/Time';
import { DeleteClient, EditClientForm, RotateSecret, SecretOnce } from '../../components/platform/ClientForms';
import { setFlash } from '../../components/platform/flash';
import { Link, navigate } from '../../router';

export default function ApplicationDetail({ params }: { params: Record<string, string> }) {
  const clientId = params.id ?? '';
  const q = useQuery(getOidcClientOptions({ path: { client_id: clientId } }));
  const [notice, setNotice] = useState<string | null>(null);
  const [rotated, setRotated] = useState<CreatedOidcClient | null>(null);
  const c = q.data;
  return (
    <Page title={c ? `Application ${c.name}` : 'Application'}>
      <p>
        <Link to="/admin/applications">Back to all applications</Link>
      </p>
      {q.isPending ? <Loading what="the application" /> : null}
      <ErrorNotice error={q.error} title="The application could not be read" />
      <SuccessNotice>{notice}</SuccessNotice>
      {rotated ? <SecretOnce client={rotated} headline="New secret made; the old one no longer works." onDismiss={() => setRotated(null)} /> : null}
      {c ? (
        <>
          <dl>
            <dt>Client ID</dt>
            <dd>
              <code>{c.client_id}</code>
            </dd>
            <dt>Type</dt>
            <dd>{c.type === 'confidential' ? 'Confidential (a secret, shown only when made)' : 'Public (PKCE only, no secret)'}</dd>
            <dt>Registered</dt>
            <dd>
              <Time value={c.created_at} />
            </dd>
          </dl>
          <div className="row-actions">
            {c.type === 'confidential' ? (
              <RotateSecret
                client={c}
                onRotated={(r) => {
                  setNotice(null);
                  setRotated(r);
                }}
              />
            ) : null}{' '}
            <DeleteClient
              client={c}
              onDeleted={(message) => {
                setFlash(message);
                navigate('/admin/applications');
              }}
            />
          </div>
          <EditClientForm key={c.updated_at} client={c} onSaved={setNotice} />
        </>
      ) : null}
    </Page>
  );
}
