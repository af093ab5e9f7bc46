/**
 * SQL of the audit log: one statement that appends an event and writes its webhook outbox rows,
 * and the newest-first keyset page the read APIs share.
 */
import type { Knex } from 'knex';
import type { StoredEvent, StoredEventOfPage } from '../../context/records';

/**
 * Appends `row` and, in the same statement, one pending delivery per enabled webhook endpoint
 * whose patterns match the action (`tenant.created`, `tenant.*` or `*`), each carrying `payload`.
 * No RETURNING: a platform transaction may write a tenant's event it is not allowed to read.
 */
export async function insertEventWithDeliveries(trx: Knex.Transaction, row: StoredEvent, payload: unknown): Promise<void> {
  const category = `${row.action.slice(0, row.action.indexOf('.'))}.*`;
  await trx.raw(
    `with ev as (
       insert into events (id, occurred_at, action, tenant_id, actor_issuer, actor_subject, actor_email, actor_platform_admin,
                           actor_scim_token_id, target_type, target_id, request_id, ip, data)
       values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?::jsonb)
     )
     insert into webhook_deliveries (webhook_id, event_id, event_type, tenant_id, payload)
     select w.id, ?, ?, ?, ?::jsonb from webhook_endpoints w
      where w.enabled and (? = any(w.event_types) or ? = any(w.event_types) or '*' = any(w.event_types))`,
    [
      row.id,
      row.occurred_at,
      row.action,
      row.tenant_id,
      row.actor_issuer,
      row.actor_subject,
      row.actor_email,
      row.actor_platform_admin,
      row.actor_scim_token_id ?? null,
      row.target_type,
      row.target_id,
      row.request_id,
      row.ip,
      JSON.stringify(row.data),
      row.id,
      row.action,
      row.tenant_id,
      JSON.stringify(payload),
      row.action,
      category,
    ],
  );
}

export interface EventFilter {
  /** Only this tenant's events (the tenant-scoped read also relies on row-level security). */
  tenantId?: string;
  action?: string;
  actorSubject?: string;
  /** With `actorSubject`: never match a platform admin's event (their identity is hidden). */
  actorSubjectSkipsPlatformAdmins?: boolean;
  since?: string;
  until?: string;
  /** Start after this (occurred_at, id), newest first. */
  after?: { occurredAt: string; id: string };
  limit: number;
}

export interface EventChunkFilter extends Omit<EventFilter, 'limit'> {
  /** Rows to read at most. */
  rows: number;
  /** The rows returned take at most this many bytes of JSON… */
  byteBudget: number;
  /** …except that the first row comes whatever its size (a page is never empty while rows remain). */
  keepFirst: boolean;
  /** `data` longer than this as jsonb text comes back as `{"truncated": true, "bytes": n}` instead. */
  dataCapJsonbText: number;
}


/**
 * Up to `rows` rows newest first, cut where their JSON would pass `byteBudget`. `fetched` is how
 * many rows the range held before that cut, `bytes` what the rows returned take.
 *
 * A row's size is an upper bound of its JSON in the API: jsonb text is never shorter than
 * compact JSON, and `to_json(text)` escapes a column exactly as JSON.stringify does. Rows past
 * the budget, and huge `data` values, stay in PostgreSQL. `data` comes as its jsonb text
 * (serialised once, for its size and for the client alike) and is parsed here.
 */
export async function selectEventChunk(trx: Knex.Transaction, f: EventChunkFilter): Promise<{ rows: StoredEventOfPage[]; fetched: number; bytes: number }> {
  const inner = trx('events')
    .select('*', trx.raw(`to_char(occurred_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as cursor_ts`))
    .orderBy([
      { column: 'occurred_at', order: 'desc' },
      { column: 'id', order: 'desc' },
    ])
    .limit(f.rows);
  if (f.tenantId !== undefined) inner.where('tenant_id', f.tenantId);
  if (f.action !== undefined) inner.where('action', f.action);
  if (f.actorSubject !== undefined) {
    inner.where('actor_subject', f.actorSubject);
    if (f.actorSubjectSkipsPlatformAdmins) inner.where('actor_platform_admin', false);
  }
  if (f.since !== undefined) inner.where('occurred_at', '>=', f.since);
  if (f.until !== undefined) inner.where('occurred_at', '<', f.until);
  if (f.after) inner.whereRaw('(occurred_at, id) < (?::timestamptz, ?::uuid)', [f.after.occurredAt, f.after.id]);
  const { sql, bindings } = inner.toSQL();
  const cap = Math.floor(f.dataCapJsonbText);
  const budget = Math.floor(f.byteBudget);
  const textBytes = ['action', 'actor_issuer', 'actor_subject', 'actor_email', 'target_type', 'target_id', 'request_id', 'ip']
    .map((c) => `coalesce(octet_length(to_json(p.${c})::text), 4)`)
    .join(' + ');
  // 400: the keys, punctuation, uuids, timestamps and booleans of one event's JSON, and its comma.
  const result = await trx.raw<{ rows: Array<Omit<StoredEventOfPage, 'data'> & { data_text: string; running_bytes: string; n: string; fetched: string }> }>(
    `select * from (
       select s.*,
              sum(s.row_bytes) over (order by s.occurred_at desc, s.id desc rows between unbounded preceding and current row) as running_bytes,
              row_number() over (order by s.occurred_at desc, s.id desc) as n,
              count(*) over () as fetched
         from (
           select p.id, p.occurred_at, p.action, p.tenant_id, p.actor_issuer, p.actor_subject, p.actor_email, p.actor_platform_admin, p.actor_scim_token_id,
                  p.target_type, p.target_id, p.request_id, p.ip, p.cursor_ts, b.data_bytes,
                  case when b.data_bytes > ${cap} then json_build_object('truncated', true, 'bytes', b.data_bytes)::text else b.data_text end as data_text,
                  400 + (case when b.data_bytes > ${cap} then 64 else b.data_bytes end) + ${textBytes} as row_bytes
             from (${sql}) p
             cross join lateral (select t as data_text, octet_length(t) as data_bytes from (select p.data::text as t offset 0) d) b
         ) s
     ) w
     where w.n = 1 or w.running_bytes <= ${budget}
     order by w.occurred_at desc, w.id desc`,
    bindings as Knex.RawBinding[],
  );
  // The first row comes back even when it does not fit, so that `fetched` is known.
  const rows = result.rows.filter((r) => f.keepFirst || Number(r.running_bytes) <= budget);
  return {
    rows: rows.map(({ running_bytes: _r, n: _n, fetched: _f, data_text, ...r }) => ({
      ...r,
      data: JSON.parse(data_text) as Record<string, unknown>,
      data_bytes: Number(r.data_bytes),
      row_bytes: Number(r.row_bytes),
    })),
    fetched: result.rows.length ? Number(result.rows[0]!.fetched) : 0,
    bytes: rows.length ? Number(rows[rows.length - 1]!.running_bytes) : 0,
  };
}
