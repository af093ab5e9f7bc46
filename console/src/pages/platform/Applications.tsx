/**
 * Platform admins: the applications that sign people in through the service's provider
 * (docs/sign-in.md#clients), each with its type and redirect URIs, a link to edit it and a
 * button to delete it; the form that registers one, then shows its secret once.
 * Operations: listOidcClients, createOidcClient, deleteOidcClient.
 */
import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { listOidcClientsOptions } from '@generated/@tanstack/react-query.gen';
import type { CreatedOidcClient } from '@generated/types.gen';
import { ErrorNotice, SuccessNotice } from '../../components/ErrorNotice';
import { Loading, Page } from '../../components/Page';
import { Time } from '../../components/Time';
import { DeleteClient, RegisterClientForm, SecretOnce } from '../../components/platform/ClientForms';
import { takeFlash } from '../../components/platform/flash';
import { Link } from '../../router';

export default function Applications() {
  const list = useQuery(listOidcClientsOptions());
  const [notice, setNotice] = useState<string | null>(takeFlash);
  const [created, setCreated] = useState<CreatedOidcClient | null>(null);
  const clients = list.data?.clients ?? [];
  return (
    <Page title="Applications">
      <p>
        Your product&apos;s applications that sign people in through this service (its OpenID provider at <code>/oidc</code>). Each needs its client ID, and a
        confidential one its secret.
      </p>
      <SuccessNotice>{notice}</SuccessNotice>
      {created ? (
        created.client_secret ? (
          <SecretOnce client={created} headline={`${created.name} registered.`} onDismiss={() => setCreated(null)} />
        ) : (
          <SuccessNotice>
            {created.name} registered. Its client ID is <code>{created.client_id}</code>; it has no secret (a public client signs in with PKCE).
          </SuccessNotice>
        )
      ) : null}
      {list.isPending ? <Loading what="applications" /> : null}
      <ErrorNotice error={list.error} title="The applications could not be read" />
      {/* The service's own clients (the console's) are always listed; the product's may be none yet. */}
      {list.data && clients.every((c) => c.built_in) ? <p>No application yet.</p> : null}
      {clients.length ? (
        <table>
          <caption className="visually-hidden">Applications</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Client ID</th>
              <th scope="col">Type</th>
              <th scope="col">Redirect URIs</th>
              <th scope="col">Registered</th>
              <th scope="col">
                <span className="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {clients.map((c) => (
              <tr key={c.client_id}>
                <td>{c.built_in ? c.name : <Link to={`/admin/applications/${encodeURIComponent(c.client_id)}`}>{c.name}</Link>}</td>
                <td>
                  <code>{c.client_id}</code>
                </td>
                <td>{c.type === 'confidential' ? 'Confidential' : 'Public'}</td>
                <td>
                  {c.redirect_uris.map((u) => (
                    <div key={u}>
                      <code>{u}</code>
                    </div>
                  ))}
                </td>
                <td>
                  <Time value={c.created_at} />
                </td>
                <td className="row-actions">{c.built_in ? 'Built in' : <DeleteClient client={c} onDeleted={setNotice} />}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
      <RegisterClientForm
        onRegistered={(c) => {
          setNotice(null);
          setCreated(c);
        }}
      />
    </Page>
  );
}
