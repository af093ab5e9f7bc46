/**
 * The retention purge: events older than the retention period, finished outbox rows, and
 * console sign-in codes that expired unused (docs/console.md#the-local-provider-tenantctl-console). It
 * runs as the table OWNER (the runtime role may never delete an event): the append-only trigger
 * lets the owner delete only rows older than `app.event_retention_cutoff`, which it sets here.
 */
import type { Knex } from 'knex';

const PURGE_LOCK = 7_284_019_552; // pg_try_advisory_lock key: one purger at a time per database
const BATCH = 5_000;

export interface PurgeResult {
  events: number;
  deliveries: number;
  /** Console sign-in codes that expired unused. */
  signInCodes: number;
  /** False when another instance held the purge lock (it purges; this one did nothing). */
  ran: boolean;
}

/**
 * Deletes, in batches of 5 000 rows per transaction, events older than `retentionDays`,
 * delivered outbox rows finished more than `deliveredKeepHours` ago, and failed ones older than
 * `retentionDays`; then expired console sign-in codes. `owner` must connect as the owner of the events table.
 */
export async function purgeExpired(owner: Knex, opts: { retentionDays: number; deliveredKeepHours?: number }): Promise<PurgeResult> {
  const keepHours = opts.deliveredKeepHours ?? 24;
  return owner.transaction(async (lockTrx) => {
    // A transaction-level advisory lock held while the batches run on other connections.
    const got = await lockTrx.raw<{ rows: Array<{ ok: boolean }> }>('select pg_try_advisory_xact_lock(?) as ok', [PURGE_LOCK]);
    if (!got.rows[0]!.ok) return { events: 0, deliveries: 0, signInCodes: 0, ran: false };
    const cutoffRow = await lockTrx.raw<{ rows: Array<{ cutoff: string }> }>(
      `select to_char((now() - make_interval(days => ?)) at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as cutoff`,
      [opts.retentionDays],
    );
    const cutoff = cutoffRow.rows[0]!.cutoff;
    let events = 0;
    for (;;) {
      const n = await owner.transaction(async (trx) => {
        await trx.raw("select set_config('app.event_retention_cutoff', ?, true)", [cutoff]);
        const r = await trx.raw<{ rowCount: number }>(
          'delete from events where id = any(array(select id from events where occurred_at < ?::timestamptz limit ?))',
          [cutoff, BATCH],
        );
        return r.rowCount;
      });
      events += n;
      if (n < BATCH) break;
    }
    let deliveries = 0;
    for (;;) {
      const r = await owner.raw<{ rowCount: number }>(
        `delete from webhook_deliveries where id = any(array(
           select id from webhook_deliveries
            where (status = 'delivered' and finished_at < now() - make_interval(hours => ?))
               or (status = 'failed' and finished_at < ?::timestamptz)
            limit ?))`,
        [keepHours, cutoff, BATCH],
      );
      deliveries += r.rowCount;
      if (r.rowCount < BATCH) break;
    }
    // Making a code also deletes expired ones; this catches those left when none is made.
    const codes = await owner.raw<{ rowCount: number }>('delete from console_sign_in_codes where expires_at <= now()');
    return { events, deliveries, signInCodes: codes.rowCount, ran: true };
  });
}
