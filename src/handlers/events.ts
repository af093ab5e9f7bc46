/**
 * Tag `events`: the audit log, platform-wide (platform admins) and per tenant (tenant admins).
 */
import type { ListEventsData, ListEventsResponses, ListTenantEventsData, ListTenantEventsResponses } from '../../generated/types.gen';
import { listEvents as readEvents, listTenantEvents as readTenantEvents } from '../domain/events';
import { authenticated, tenantScoped, type HandlerInput, type Reply } from './types';

/** The filters both event lists share, from their query. */
function filtersOf(q: NonNullable<ListTenantEventsData['query']>) {
  return { action: q.action, actorSubject: q.actor_subject, since: q.since, until: q.until, limit: q.limit, cursor: q.cursor };
}

export const listEvents = authenticated(async (ctx, input: HandlerInput<ListEventsData>): Promise<Reply<ListEventsResponses>> => {
  const q = input.query;
  const page = await readEvents(ctx.services.db, { tenantId: q.tenant_id, ...filtersOf(q) });
  return { status: 200, body: { events: page.events, next_cursor: page.nextCursor } };
});

export const listTenantEvents = tenantScoped(async (ctx, input: HandlerInput<ListTenantEventsData>): Promise<Reply<ListTenantEventsResponses>> => {
  const q = input.query;
  const page = await readTenantEvents(ctx.trx, ctx.tenant.id, filtersOf(q));
  return { status: 200, body: { events: page.events, next_cursor: page.nextCursor } };
});
