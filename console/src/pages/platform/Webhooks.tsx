/**
 * Platform admins: the webhook endpoints (each with its events, state, and buttons to enable,
 * disable or delete it), and the form that adds one and shows its signing secret once.
 * Operations: listWebhooks, createWebhook, updateWebhook, deleteWebhook.
 */
import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { listWebhooksOptions } from '@generated/@tanstack/react-query.gen';
import { ErrorNotice, SuccessNotice } from '../../components/ErrorNotice';
import { Loading, Page } from '../../components/Page';
import { Time } from '../../components/Time';
import { CreateWebhookForm } from '../../components/platform/CreateWebhookForm';
import { takeFlash } from '../../components/platform/flash';
import { DeleteWebhook, ToggleWebhook } from '../../components/platform/WebhookActions';
import { Link } from '../../router';

export default function Webhooks() {
  const list = useQuery(listWebhooksOptions());
  const [notice, setNotice] = useState<string | null>(takeFlash);
  const hooks = list.data?.webhooks ?? [];
  return (
    <Page title="Webhooks">
      <p>Every change is POSTed to the endpoints whose event patterns match it, signed as the Standard Webhooks specification says.</p>
      <SuccessNotice>{notice}</SuccessNotice>
      {list.isPending ? <Loading what="webhooks" /> : null}
      <ErrorNotice error={list.error} title="The webhooks could not be read" />
      {list.data && hooks.length === 0 ? <p>No webhook yet.</p> : null}
      {hooks.length ? (
        <table>
          <caption className="visually-hidden">Webhooks</caption>
          <thead>
            <tr>
              <th scope="col">Receiver</th>
              <th scope="col">Description</th>
              <th scope="col">Events</th>
              <th scope="col">State</th>
              <th scope="col">Created</th>
              <th scope="col">
                <span className="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {hooks.map((w) => (
              <tr key={w.webhook_id}>
                <td>
                  <Link to={`/admin/webhooks/${w.webhook_id}`}>{w.url}</Link>
                </td>
                <td>{w.description ?? '—'}</td>
                <td>
                  {w.events.map((e, i) => (
                    <span key={e}>
                      {i ? ', ' : ''}
                      <code>{e}</code>
                    </span>
                  ))}
                </td>
                <td>{w.enabled ? 'Enabled' : 'Disabled'}</td>
                <td>
                  <Time value={w.created_at} />
                </td>
                <td className="row-actions">
                  <ToggleWebhook webhook={w} onDone={setNotice} /> <DeleteWebhook webhook={w} onDeleted={setNotice} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
      <CreateWebhookForm />
    </Page>
  );
}
