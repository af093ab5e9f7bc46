/**
 * Platform admins: the event log of every tenant and the platform, newest first, filtered by
 * tenant ID, action, actor subject and a time range (all in the address, so a filtered view can
 * be reloaded or shared), cursor paged.
 * Operations: listEvents.
 */
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { useId, useState, type FormEvent } from 'react';
import { listEventsOptions } from '@generated/@tanstack/react-query.gen';
import type { ListEventsData } from '@generated/types.gen';
import { ErrorNotice } from '../../components/ErrorNotice';
import { Loading, Page } from '../../components/Page';
import { Pager, useCursorPager } from '../../components/Pager';
import { EVENT_ACTIONS } from '@service/context/event-actions';
import { EventTable } from '../../components/EventTable';
import { navigate, useLocation } from '../../router';

const PAGE_SIZE = 50;
const FILTERS = ['tenant_id', 'action', 'actor_subject', 'since', 'until'] as const;
type Filters = Record<(typeof FILTERS)[number], string>;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** An ISO time as the value of a datetime-local input (the reader's local time). */
function toLocalInput(iso: string): string {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return '';
  const p = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}T${p(d.getHours())}:${p(d.getMinutes())}`;
}

function FilterForm({ current }: { current: Filters }) {
  const id = useId();
  const [f, setF] = useState<Filters>({ ...current, since: current.since ? toLocalInput(current.since) : '', until: current.until ? toLocalInput(current.until) : '' });
  const [problem, setProblem] = useState<string | null>(null);
  const field = (name: keyof Filters, label: string, extra: Record<string, unknown> = {}) => (
    <div className="field">
      <label htmlFor={`${id}-${name}`}>{label}</label>
      <input id={`${id}-${name}`} value={f[name]} onChange={(e) => setF({ ...f, [name]: e.target.value })} {...extra} />
    </div>
  );
  function submit(e: FormEvent) {
    e.preventDefault();
    const tenant = f.tenant_id.trim();
    if (tenant && !UUID.test(tenant)) return setProblem('A tenant ID looks like 3f2c9a1e-…: 32 hexadecimal digits in five groups. Copy it from the tenant’s page.');
    if (f.since && f.until && new Date(f.since) >= new Date(f.until)) return setProblem('“From” must be before “Until”.');
    setProblem(null);
    const out = new URLSearchParams();
    if (tenant) out.set('tenant_id', tenant);
    if (f.action.trim()) out.set('action', f.action.trim());
    if (f.actor_subject.trim()) out.set('actor_subject', f.actor_subject.trim());
    if (f.since) out.set('since', new Date(f.since).toISOString());
    if (f.until) out.set('until', new Date(f.until).toISOString());
    const qs = out.toString();
    navigate(qs ? `/admin/events?${qs}` : '/admin/events');
  }
  return (
    <form onSubmit={submit} aria-label="Event filters">
      <div className="form-row">
        {field('tenant_id', 'Tenant ID', { spellCheck: false, autoComplete: 'off' })}
        {field('action', 'Action', { list: `${id}-actions`, spellCheck: false })}
        <datalist id={`${id}-actions`}>
          {EVENT_ACTIONS.map((a) => (
            <option key={a} value={a} />
          ))}
        </datalist>
        {field('actor_subject', 'Actor subject', { spellCheck: false })}
      </div>
      <div className="form-row">
        {field('since', 'From', { type: 'datetime-local' })}
        {field('until', 'Until', { type: 'datetime-local' })}
        <button type="submit">Apply filters</button>
        <button type="button" onClick={() => navigate('/admin/events')}>
          Clear filters
        </button>
      </div>
      {problem ? (
        <p className="notice notice-error" role="alert">
          {problem}
        </p>
      ) : null}
    </form>
  );
}

function EventPages({ filters }: { filters: Filters }) {
  const pager = useCursorPager();
  const query: NonNullable<ListEventsData['query']> = { limit: PAGE_SIZE };
  for (const k of FILTERS) if (filters[k]) query[k] = filters[k];
  if (pager.cursor) query.cursor = pager.cursor;
  const list = useQuery({ ...listEventsOptions({ query }), placeholderData: keepPreviousData });
  return (
    <>
      {list.isPending ? <Loading what="events" /> : null}
      <ErrorNotice error={list.error} title="The events could not be read" />
      {list.data ? (
        <>
          {list.data.events.length ? <EventTable events={list.data.events} caption="Events" tenantColumn /> : <p>No event matches these filters.</p>}
          <Pager label="Event pages" page={pager.page} nextCursor={list.data.next_cursor} onNext={pager.next} onPrevious={pager.previous} summary={`${list.data.events.length} ${list.data.events.length === 1 ? 'event' : 'events'} on this page`} />
        </>
      ) : null}
    </>
  );
}

export default function Events() {
  const loc = useLocation();
  const filters = Object.fromEntries(FILTERS.map((k) => [k, (loc.query.get(k) ?? '').trim()])) as Filters;
  const key = FILTERS.map((k) => filters[k]).join('|');
  return (
    <Page title="Event log">
      <p>Every change to tenants, members, invitations, webhooks and boards, newest first.</p>
      <FilterForm key={`f:${key}`} current={filters} />
      <EventPages key={`p:${key}`} filters={filters} />
    </Page>
  );
}
