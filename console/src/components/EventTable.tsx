/**
 * A page of events as a table: time, action, (for platform admins) tenant, actor, target, and
 * the event's data as formatted JSON in a disclosure (content of the event, never an error
 * body), with its request ID. Used by the platform and the tenant event logs.
 */
import type { Event } from '@generated/types.gen';
import { Link } from '../router';
import { Time } from './Time';

function actor(e: Event): string {
  const a = e.actor;
  const who = a.email ?? a.subject ?? null;
  if (a.platform_admin) return who ? `${who} (platform admin)` : 'a platform admin';
  if (!who && !a.issuer) return 'the service';
  return who ?? a.issuer ?? 'unknown';
}

export function EventTable({ events, caption, tenantColumn }: { events: Event[]; caption: string; tenantColumn: boolean }) {
  return (
    <table>
      <caption className="visually-hidden">{caption}</caption>
      <thead>
        <tr>
          <th scope="col">Time</th>
          <th scope="col">Action</th>
          {tenantColumn ? <th scope="col">Tenant</th> : null}
          <th scope="col">Actor</th>
          <th scope="col">Target</th>
          <th scope="col">Data</th>
        </tr>
      </thead>
      <tbody>
        {events.map((e) => (
          <tr key={e.event_id}>
            <td>
              <Time value={e.occurred_at} />
            </td>
            <td>
              <code>{e.action}</code>
            </td>
            {tenantColumn ? <td>{e.tenant_id ? <Link to={`/admin/tenants/${e.tenant_id}`}>{e.tenant_id}</Link> : 'platform-wide'}</td> : null}
            <td>
              {actor(e)}
              {e.actor.issuer ? <span className="hint"> · {e.actor.issuer}</span> : null}
            </td>
            <td>
              {e.target.type}
              {e.target.id ? (
                <>
                  {' '}
                  <code>{e.target.id}</code>
                </>
              ) : null}
            </td>
            <td>
              <details>
                <summary>Data of {e.action}</summary>
                <pre>{JSON.stringify(e.data, null, 2)}</pre>
                {e.request_id ? (
                  <p className="hint">
                    Request <code>{e.request_id}</code>
                    {e.ip ? ` from ${e.ip}` : ''}
                  </p>
                ) : null}
              </details>
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
