/**
 * Tag `webhooks`: endpoints and their deliveries (platform admins only).
 */
import type {
  CreateWebhookData,
  CreateWebhookResponses,
  DeleteWebhookData,
  DeleteWebhookResponses,
  GetWebhookData,
  GetWebhookResponses,
  ListWebhookDeliveriesData,
  ListWebhookDeliveriesResponses,
  ListWebhooksResponses,
  UpdateWebhookData,
  UpdateWebhookResponses,
} from '../../generated/types.gen';
import * as webhooks from '../domain/webhooks';
import { authenticated, type HandlerInput, type Reply } from './types';

export const createWebhook = authenticated(async (ctx, input: HandlerInput<CreateWebhookData>): Promise<Reply<CreateWebhookResponses>> => {
  const b = input.body;
  const created = await webhooks.createWebhook(
    ctx.services.db,
    ctx.origin,
    { url: b.url, events: b.events, description: b.description, enabled: b.enabled },
    { allowPrivateNetworks: ctx.config.webhookAllowPrivateNetworks },
    ctx.config.keyEncryptionSecret,
  );
  ctx.log.info({ webhook_id: created.webhook_id, events: created.events }, 'Webhook endpoint created');
  return { status: 201, body: created };
});

export const listWebhooks = authenticated(async (ctx): Promise<Reply<ListWebhooksResponses>> => ({
  status: 200,
  body: { webhooks: await webhooks.listWebhooks(ctx.services.db) },
}));

export const getWebhook = authenticated(async (ctx, input: HandlerInput<GetWebhookData>): Promise<Reply<GetWebhookResponses>> => ({
  status: 200,
  body: await webhooks.getWebhook(ctx.services.db, input.path.webhook_id),
}));

export const updateWebhook = authenticated(async (ctx, input: HandlerInput<UpdateWebhookData>): Promise<Reply<UpdateWebhookResponses>> => {
  const b = input.body;
  const updated = await webhooks.updateWebhook(
    ctx.services.db,
    ctx.origin,
    input.path.webhook_id,
    { url: b.url, events: b.events, description: b.description, enabled: b.enabled },
    { allowPrivateNetworks: ctx.config.webhookAllowPrivateNetworks },
  );
  ctx.log.info({ webhook_id: updated.webhook_id, fields: Object.keys(b) }, 'Webhook endpoint updated');
  return { status: 200, body: updated };
});

export const deleteWebhook = authenticated(async (ctx, input: HandlerInput<DeleteWebhookData>): Promise<Reply<DeleteWebhookResponses>> => {
  await webhooks.deleteWebhook(ctx.services.db, ctx.origin, input.path.webhook_id);
  ctx.log.info({ webhook_id: input.path.webhook_id }, 'Webhook endpoint deleted');
  return { status: 204, body: undefined };
});

export const listWebhookDeliveries = authenticated(
  async (ctx, input: HandlerInput<ListWebhookDeliveriesData>): Promise<Reply<ListWebhookDeliveriesResponses>> => {
    const page = await webhooks.listWebhookDeliveries(ctx.services.db, input.path.webhook_id, { limit: input.query.limit, cursor: input.query.cursor });
    return { status: 200, body: { deliveries: page.deliveries, next_cursor: page.nextCursor } };
  },
);
