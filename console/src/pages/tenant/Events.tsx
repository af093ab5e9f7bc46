/**
 * /tenant/events (tenant admins): the tenant's event log (listTenantEvents), newest first, a
 * page at a time, filtered by action, actor subject and a time window.
 */
import { useQuery } from '@tanstack/react-query';
import { useId, useState, type FormEvent } from 'react';
import { listTenantEventsOptions } from '@generated/@tanstack/react-query.gen';
import type { ListTenantEventsData } from '@generated/types.gen';
import { EVENT_ACTIONS } from '@service/context/event-actions';
import { localProblem } from '../../api';
import { ErrorNotice } from '../../components/ErrorNotice';
import { Loading, Page } from '../../components/Page';
import { Pager, useCursorPager } from '../../components/Pager';
import { EventTable } from '../../components/EventTable';
import { useSession } from '../../session';

const PAGE_SIZE = 50;

type Filters = Omit<NonNullable<ListTenantEventsData['query']>, 'limit' | 'cursor'>;

/** A datetime-local value (the reader's time zone) as ISO 8601, or null when empty or invalid. */
function toIso(local: string): string | null | undefined {
  if (!local) return undefined;
  const d = new Date(local);
  return Number.isNaN(d.getTime()) ? null : d.toISOString();
}

export default function Events() {
  const s = useSession();
  const id = useId();
  const pager = useCursorPager();
  const [action, setAction] = useState('');
  const [actor, setActor] = useState('');
  const [since, setSince] = useState('');
  const [until, setUntil] = useState('');
  const [filters, setFilters] = useState<Filters>({});
  const [invalid, setInvalid] = useState<string | null>(null);
  const list = useQuery(
    listTenantEventsOptions({ headers: s.tenantHeaders, query: { ...filters, limit: PAGE_SIZE, ...(pager.cursor ? { cursor: pager.cursor } : {}) } }),
  );

  function apply(e: FormEvent) {
    e.preventDefault();
    const sinceIso = toIso(since);
    const untilIso = toIso(until);
    if (sinceIso === null || untilIso === null) {
      setInvalid('Enter the times as a date and a time, or leave them empty.');
      return;
    }
    setInvalid(null);
    const next: Filters = {};
    if (action.trim()) next.action = action.trim();
    if (actor.trim()) next.actor_subject = actor.trim();
    if (sinceIso) next.since = sinceIso;
    if (untilIso) next.until = untilIso;
    setFilters(next);
    pager.reset();
  }
  function clear() {
    setAction('');
    setActor('');
    setSince('');
    setUntil('');
    setInvalid(null);
    setFilters({});
    pager.reset();
  }

  return (
    <Page title="Tenant events">
      <p className="hint">Every change to this tenant, its members and its invitations, newest first.</p>
      <form onSubmit={apply} aria-label="Filter events">
        <div className="form-row">
          <div className="field">
            <label htmlFor={`${id}-action`}>Action</label>
            <input id={`${id}-action`} list={`${id}-actions`} value={action} onChange={(e) => setAction(e.target.value)} autoComplete="off" />
            <datalist id={`${id}-actions`}>
              {EVENT_ACTIONS.map((a) => (
                <option key={a} value={a} />
              ))}
            </datalist>
          </div>
          <div className="field">
            <label htmlFor={`${id}-actor`}>Actor subject</label>
            <input id={`${id}-actor`} value={actor} onChange={(e) => setActor(e.target.value)} autoComplete="off" />
          </div>
          <div className="field">
            <label htmlFor={`${id}-since`}>Since (your time)</label>
            <input id={`${id}-since`} type="datetime-local" value={since} onChange={(e) => setSince(e.target.value)} />
          </div>
          <div className="field">
            <label htmlFor={`${id}-until`}>Until (your time)</label>
            <input id={`${id}-until`} type="datetime-local" value={until} onChange={(e) => setUntil(e.target.value)} />
          </div>
          <button type="submit" className="primary">
            Apply filters
          </button>
          <button type="button" onClick={clear}>
            Clear filters
          </button>
        </div>
      </form>
      {invalid ? <ErrorNotice error={localProblem('Invalid filter', invalid)} /> : null}
      {list.isPending ? <Loading what="events" /> : null}
      <ErrorNotice error={list.error} />
      {list.data ? (
        <>
          {list.data.events.length ? (
            <EventTable events={list.data.events} caption="Tenant events, newest first" tenantColumn={false} />
          ) : (
            <p>No events match these filters.</p>
          )}
          <Pager label="Event pages" page={pager.page} nextCursor={list.data.next_cursor} onNext={pager.next} onPrevious={pager.previous} />
        </>
      ) : null}
    </Page>
  );
}
