/**
 * Tag `setup`, a tenant's lifecycle (platform admins only): suspend, reactivate, schedule and
 * cancel a deletion, export and import. Thin: each handler calls one domain function.
 */
import type {
  CancelTenantDeletionData,
  CancelTenantDeletionResponses,
  ExportTenantData,
  ExportTenantResponses,
  ImportTenantData,
  ImportTenantResponses,
  ReactivateTenantData,
  ReactivateTenantResponses,
  ScheduleTenantDeletionData,
  ScheduleTenantDeletionResponses,
  SuspendTenantData,
  SuspendTenantResponses,
} from '../../generated/types.gen';
import * as lifecycle from '../domain/tenant-lifecycle';
import { EXPORT_CONTENT_TYPE, exportTenant as prepareExport } from '../domain/tenant-export';
import { importTenant as runImport } from '../domain/tenant-import';
import { NOT_MOVED } from '../domain/tenant-move';
import { withSpooledBody } from '../domain/import-spool';
import { ApiError } from '../errors';
import { toTenant } from './mappers';
import { authenticated, type HandlerInput, type Reply } from './types';

export const suspendTenant = authenticated(async (ctx, input: HandlerInput<SuspendTenantData>): Promise<Reply<SuspendTenantResponses>> => {
  const row = await lifecycle.suspendTenant(ctx.services.db, ctx.origin, input.path.tenant_id, input.body.reason, { multiTenantMode: ctx.config.multiTenantMode });
  ctx.log.warn({ tenant_id: row.id, tenant_slug: row.slug }, 'Tenant suspended');
  return { status: 200, body: toTenant(row) };
});

export const reactivateTenant = authenticated(async (ctx, input: HandlerInput<ReactivateTenantData>): Promise<Reply<ReactivateTenantResponses>> => {
  const row = await lifecycle.reactivateTenant(ctx.services.db, ctx.origin, input.path.tenant_id);
  ctx.log.info({ tenant_id: row.id, tenant_slug: row.slug }, 'Tenant reactivated');
  return { status: 200, body: toTenant(row) };
});

export const scheduleTenantDeletion = authenticated(async (ctx, input: HandlerInput<ScheduleTenantDeletionData>): Promise<Reply<ScheduleTenantDeletionResponses>> => {
  const graceDays = input.body?.grace_days ?? lifecycle.DEFAULT_GRACE_DAYS;
  const row = await lifecycle.scheduleTenantDeletion(ctx.services.db, ctx.origin, input.path.tenant_id, graceDays, { multiTenantMode: ctx.config.multiTenantMode });
  ctx.log.warn({ tenant_id: row.id, tenant_slug: row.slug, delete_after: row.lifecycle?.deleteAfter }, 'Tenant deletion scheduled');
  return { status: 200, body: toTenant(row) };
});

export const cancelTenantDeletion = authenticated(async (ctx, input: HandlerInput<CancelTenantDeletionData>): Promise<Reply<CancelTenantDeletionResponses>> => {
  const row = await lifecycle.cancelTenantDeletion(ctx.services.db, ctx.origin, input.path.tenant_id);
  ctx.log.info({ tenant_id: row.id, tenant_slug: row.slug, status: row.status }, 'Tenant deletion cancelled');
  return { status: 200, body: toTenant(row) };
});

export const exportTenant = authenticated(async (ctx, input: HandlerInput<ExportTenantData>): Promise<Reply<ExportTenantResponses>> => {
  const exported = await prepareExport(ctx.services.db, ctx.origin, input.path.tenant_id);
  ctx.log.info({ tenant_id: exported.tenantId, tenant_slug: exported.slug }, 'Tenant export started');
  return {
    status: 200,
    body: '',
    headers: {
      'Content-Type': `${EXPORT_CONTENT_TYPE}; charset=utf-8`,
      'Content-Disposition': `attachment; filename="tenant-${exported.slug}.ndjson"`,
      'Cache-Control': 'no-store',
    },
    stream: (out) => exported.write(out),
  };
});

export const importTenant = authenticated(async (ctx, input: HandlerInput<ImportTenantData>): Promise<Reply<ImportTenantResponses>> => {
  const max = ctx.config.importMaxBytes;
  const declared = Number(input.headers['content-length'] ?? NaN);
  // Refused before a byte is read when the client says how large it is.
  if (declared > max) throw new ApiError('payloadTooLarge', `The import is larger than ${max} bytes (SERVICE_IMPORT_MAX_BYTES).`);
  if (!input.bodyStream) throw new Error('importTenant needs its streamed body');
  const body = input.bodyStream as NodeJS.ReadableStream & { complete?: boolean };
  // The whole body first, into a private file at disk speed (within the request timeout); then
  // the rows, for as long as they take (docs/operations.md#moving-a-tenant-between-deployments).
  let bytes = 0;
  const r = await withSpooledBody(ctx.config.dataDir, body as AsyncIterable<Buffer>, { maxBytes: max, complete: () => body.complete !== false }, (content, size) => {
    bytes = size;
    ctx.log.info({ bytes }, 'Tenant import received; writing its rows');
    return runImport(ctx.services.db, ctx.origin, content, { maxBytes: max });
  });
  ctx.log.warn({ tenant_id: r.tenantId, tenant_slug: r.slug, counts: r.counts, bytes }, 'Tenant imported');
  return { status: 201, body: { tenant_id: r.tenantId, slug: r.slug, counts: r.counts, not_moved: NOT_MOVED.map((n) => ({ item: n.item, detail: n.detail })) } };
});
