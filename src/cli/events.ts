/**
 * `tenantctl events list`: the audit log (GET /api/setup/events) on the generated client,
 * newest first, following the pages until --limit events are printed.
 */
import { type Command, InvalidArgumentError, Option } from 'commander';
import * as sdk from '../../generated/sdk.gen';
import type { Event } from '../../generated/types.gen';
import { call, connect, REQUEST_TIMEOUT_MS, type Connection, type GlobalOptions } from './api';
import { CliError } from './errors';
import { renderTable, type Style } from './output';

export interface EventsCommandHelpers {
  globals(cmd: Command): GlobalOptions;
  style(cmd: Command): Style;
  print(s: string): void;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const SLUG = /^[a-z0-9-]{1,255}$/;
const ACTION = /^[a-z_]+\.[a-z_]+$/;

/** An ISO 8601 date-time, or a duration ago: 90s, 30m, 24h, 7d. */
export function parseSince(v: string, now = Date.now()): string {
  const rel = /^(\d+)([smhd])$/.exec(v.trim());
  if (rel) {
    const unit = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 }[rel[2] as 's' | 'm' | 'h' | 'd'];
    return new Date(now - Number(rel[1]) * unit).toISOString();
  }
  if (/^\d{4}-\d{2}-\d{2}/.test(v) && !Number.isNaN(Date.parse(v))) return new Date(v).toISOString();
  throw new InvalidArgumentError('--since must be an ISO 8601 time (2026-01-31T12:00:00Z) or a duration ago such as 30m, 24h or 7d.');
}

function parseTenant(v: string): string {
  if (!UUID.test(v) && !SLUG.test(v)) throw new InvalidArgumentError('--tenant must be a tenant slug or a tenant id (UUID).');
  return v;
}

function parseAction(v: string): string {
  if (!ACTION.test(v)) throw new InvalidArgumentError('--action must be an action such as tenant.created or member.added.');
  return v;
}

function parseCount(v: string): number {
  if (!/^\d+$/.test(v) || Number(v) < 1 || Number(v) > 100_000) throw new InvalidArgumentError('--limit must be an integer from 1 to 100000.');
  return Number(v);
}

/** The id of the tenant with `slug` (exact match), or a CliError. Deleted tenants: pass their id. */
async function tenantIdOf(conn: Connection, slug: string): Promise<string> {
  const page = await call(conn, 'events list', sdk.listTenants({ client: conn.client, query: { q: slug, limit: 1000 }, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) }));
  const found = page.tenants.find((t) => t.slug === slug);
  if (!found) throw new CliError(`no tenant with slug '${slug}' (for a deleted tenant's events, pass its tenant id)`, 1);
  return found.tenant_id;
}

export function registerEventsCommand(program: Command, h: EventsCommandHelpers): void {
  const events = program.command('events').description('the audit log of every change (platform admin)');
  events
    .command('list')
    .description('list events, newest first')
    .option('--tenant <slug-or-id>', "only this tenant's events", parseTenant)
    .option('--action <action>', 'only this action, e.g. tenant.created', parseAction)
    .option('--actor <subject>', 'only events made by this subject')
    .option('--since <time>', 'only events at or after this time (ISO 8601, or 30m, 24h, 7d ago)', (v: string) => parseSince(v))
    .option('--limit <n>', 'print at most this many events', parseCount, 100)
    .addOption(new Option('--format <format>', 'output format').choices(['table', 'json']).default('table'))
    .action(async (opts: { tenant?: string; action?: string; actor?: string; since?: string; limit: number; format: 'table' | 'json' }, cmd: Command) => {
      const conn = connect(h.globals(cmd));
      const tenantId = opts.tenant === undefined ? undefined : UUID.test(opts.tenant) ? opts.tenant.toLowerCase() : await tenantIdOf(conn, opts.tenant);
      const out: Event[] = [];
      let cursor: string | undefined;
      for (;;) {
        const page = await call(
          conn,
          'events list',
          sdk.listEvents({
            client: conn.client,
            query: {
              limit: Math.min(1000, opts.limit - out.length),
              ...(tenantId ? { tenant_id: tenantId } : {}),
              ...(opts.action ? { action: opts.action } : {}),
              ...(opts.actor ? { actor_subject: opts.actor } : {}),
              ...(opts.since ? { since: opts.since } : {}),
              ...(cursor ? { cursor } : {}),
            },
            signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
          }),
        );
        out.push(...page.events);
        if (page.next_cursor === null || page.events.length === 0 || out.length >= opts.limit) break;
        if (page.next_cursor === cursor) throw new CliError('the server returned the same next_cursor twice');
        cursor = page.next_cursor;
      }
      if (opts.format === 'json') return h.print(`${JSON.stringify({ events: out }, null, 2)}\n`);
      if (!out.length) return h.print('No events.\n');
      h.print(
        renderTable(
          out,
          [
            { header: 'TIME', value: (e) => e.occurred_at },
            { header: 'ACTION', value: (e) => e.action },
            { header: 'TENANT', value: (e) => e.tenant_id ?? '-' },
            { header: 'ACTOR', value: (e) => `${e.actor.subject ?? '-'}${e.actor.platform_admin ? ' (platform admin)' : ''}` },
            { header: 'TARGET', value: (e) => `${e.target.type}:${e.target.id ?? '-'}` },
          ],
          h.style(cmd),
        ),
      );
      h.print(`${out.length} event${out.length === 1 ? '' : 's'}\n`);
    });
}
