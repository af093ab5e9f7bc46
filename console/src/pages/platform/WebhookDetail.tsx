/**
 * Platform admins: one webhook endpoint, with enable/disable and delete, and its deliveries
 * (newest first, paged), each with every attempt: when, the receiver's status code or the error
 * category, how long it took, and when the next retry is due.
 * Operations: getWebhook, updateWebhook, deleteWebhook, listWebhookDeliveries.
 */
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { getWebhookOptions, listWebhookDeliveriesOptions } from '@generated/@tanstack/react-query.gen';
import type { WebhookDelivery } from '@generated/types.gen';
import { ErrorNotice, SuccessNotice } from '../../components/ErrorNotice';
import { Loading, Page } from '../../components/Page';
import { Pager, useCursorPager } from '../../components/Pager';
import { Time } from '../../components/Time';
import { setFlash } from '../../components/platform/flash';
import { DeleteWebhook, ToggleWebhook } from '../../components/platform/WebhookActions';
import { Link, navigate } from '../../router';

const PAGE_SIZE = 20;
const DELIVERY_STATUS: Record<WebhookDelivery['status'], string> = { pending: 'Pending', delivered: 'Delivered', failed: 'Failed (no retry left)' };

function DeliveryRows({ d }: { d: WebhookDelivery }) {
  const span = Math.max(1, d.attempts.length);
  const head = (
    <>
      <th scope="row" rowSpan={span}>
        <code>{d.event_type}</code>
        <br />
        <span className="hint">
          <Time value={d.created_at} />
        </span>
      </th>
      <td rowSpan={span}>
        {DELIVERY_STATUS[d.status] ?? d.status}
        {d.status === 'pending' && d.next_attempt_at ? (
          <>
            <br />
            <span className="hint">
              next try <Time value={d.next_attempt_at} />
            </span>
          </>
        ) : null}
      </td>
    </>
  );
  if (!d.attempts.length) {
    return (
      <tr>
        {head}
        <td colSpan={5}>No attempt yet.</td>
      </tr>
    );
  }
  return (
    <>
      {d.attempts.map((a, i) => (
        <tr key={a.attempt}>
          {i === 0 ? head : null}
          <td className="num">{a.attempt}</td>
          <td>
            <Time value={a.attempted_at} />
          </td>
          <td>{a.error ? a.error : a.status_code !== null ? `HTTP ${a.status_code}` : 'no answer'}</td>
          <td className="num">{a.duration_ms} ms</td>
          <td>{a.next_retry_at ? <Time value={a.next_retry_at} /> : '—'}</td>
        </tr>
      ))}
    </>
  );
}

function Deliveries({ webhookId }: { webhookId: string }) {
  const pager = useCursorPager();
  const list = useQuery({
    ...listWebhookDeliveriesOptions({ path: { webhook_id: webhookId }, query: { limit: PAGE_SIZE, ...(pager.cursor ? { cursor: pager.cursor } : {}) } }),
    placeholderData: keepPreviousData,
  });
  return (
    <section aria-labelledby="deliveries-h">
      <h2 id="deliveries-h">Deliveries</h2>
      <p>
        <button type="button" onClick={() => void list.refetch()} disabled={list.isFetching}>
          {list.isFetching ? 'Refreshing…' : 'Refresh'}
        </button>
      </p>
      {list.isPending ? <Loading what="deliveries" /> : null}
      <ErrorNotice error={list.error} title="The deliveries could not be read" />
      {list.data && list.data.deliveries.length === 0 ? <p>No event has been sent to this webhook yet.</p> : null}
      {list.data && list.data.deliveries.length ? (
        <table>
          <caption className="visually-hidden">Delivery attempts</caption>
          <thead>
            <tr>
              <th scope="col">Event</th>
              <th scope="col">Delivery</th>
              <th scope="col" className="num">
                Attempt
              </th>
              <th scope="col">When</th>
              <th scope="col">Answer</th>
              <th scope="col" className="num">
                Took
              </th>
              <th scope="col">Next retry</th>
            </tr>
          </thead>
          <tbody>
            {list.data.deliveries.map((d) => (
              <DeliveryRows key={d.delivery_id} d={d} />
            ))}
          </tbody>
        </table>
      ) : null}
      {list.data ? <Pager label="Delivery pages" page={pager.page} nextCursor={list.data.next_cursor} onNext={pager.next} onPrevious={pager.previous} /> : null}
    </section>
  );
}

export default function WebhookDetail({ params }: { params: Record<string, string> }) {
  const webhookId = params.id ?? '';
  const q = useQuery(getWebhookOptions({ path: { webhook_id: webhookId } }));
  const [notice, setNotice] = useState<string | null>(null);
  const w = q.data;
  return (
    <Page title={w ? `Webhook ${w.description || w.url}` : 'Webhook'}>
      <p>
        <Link to="/admin/webhooks">Back to all webhooks</Link>
      </p>
      <SuccessNotice>{notice}</SuccessNotice>
      {q.isPending ? <Loading what="the webhook" /> : null}
      <ErrorNotice error={q.error} title="The webhook could not be read" />
      {w ? (
        <>
          <dl className="facts">
            <dt>Receiver</dt>
            <dd>
              <code>{w.url}</code>
            </dd>
            <dt>Events</dt>
            <dd>{w.events.join(', ')}</dd>
            <dt>State</dt>
            <dd>{w.enabled ? 'Enabled' : 'Disabled: deliveries are held'}</dd>
            <dt>Created</dt>
            <dd>
              <Time value={w.created_at} />
            </dd>
            <dt>Last changed</dt>
            <dd>
              <Time value={w.updated_at} />
            </dd>
          </dl>
          <div className="form-row">
            <ToggleWebhook webhook={w} onDone={setNotice} />
            <DeleteWebhook
              webhook={w}
              onDeleted={(m) => {
                setFlash(m);
                navigate('/admin/webhooks');
              }}
            />
          </div>
          <Deliveries webhookId={w.webhook_id} />
        </>
      ) : null}
    </Page>
  );
}
