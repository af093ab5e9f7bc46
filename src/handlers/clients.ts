/**
 * Tag `clients`: the applications that sign people in through the service's OpenID provider
 * (platform admins only; docs/sign-in.md#clients).
 */
import type {
  CreateOidcClientData,
  CreateOidcClientResponses,
  DeleteOidcClientData,
  DeleteOidcClientResponses,
  GetOidcClientData,
  GetOidcClientResponses,
  ListOidcClientsResponses,
  OidcClient as OidcClientBody,
  UpdateOidcClientData,
  UpdateOidcClientResponses,
} from '../../generated/types.gen';
import type { OidcClient } from '../context/sign-in';
import * as clients from '../domain/sign-in/clients';
import { authenticated, type HandlerInput, type Reply } from './types';

/** A client as the API shows it: never its secret. */
function clientBody(c: OidcClient): OidcClientBody {
  return {
    client_id: c.client_id,
    name: c.name,
    type: c.type,
    redirect_uris: [...c.redirect_uris],
    post_logout_redirect_uris: [...c.post_logout_redirect_uris],
    built_in: c.built_in,
    created_at: new Date(c.created_at).toISOString(),
    updated_at: new Date(c.updated_at).toISOString(),
  };
}

/** With the secret when one was made by this request (shown only in that answer). */
function withSecret(made: { client: OidcClient; clientSecret: string | null }): OidcClientBody & { client_secret?: string } {
  return { ...clientBody(made.client), ...(made.clientSecret !== null ? { client_secret: made.clientSecret } : {}) };
}

export const createOidcClient = authenticated(async (ctx, input: HandlerInput<CreateOidcClientData>): Promise<Reply<CreateOidcClientResponses>> => {
  const b = input.body;
  const made = await clients.registerClient(ctx.services.db, ctx.config, ctx.origin, {
    name: b.name,
    type: b.type,
    redirect_uris: b.redirect_uris,
    post_logout_redirect_uris: b.post_logout_redirect_uris,
  });
  ctx.log.info({ client_id: made.client.client_id, type: made.client.type }, 'Client registered');
  return { status: 201, body: withSecret(made) };
});

export const listOidcClients = authenticated(async (ctx): Promise<Reply<ListOidcClientsResponses>> => ({
  status: 200,
  body: { clients: (await clients.listClients(ctx.services.db)).map(clientBody) },
}));

export const getOidcClient = authenticated(async (ctx, input: HandlerInput<GetOidcClientData>): Promise<Reply<GetOidcClientResponses>> => ({
  status: 200,
  body: clientBody(await clients.getClient(ctx.services.db, input.path.client_id)),
}));

export const updateOidcClient = authenticated(async (ctx, input: HandlerInput<UpdateOidcClientData>): Promise<Reply<UpdateOidcClientResponses>> => {
  const b = input.body;
  const made = await clients.updateClient(ctx.services.db, ctx.config, ctx.origin, input.path.client_id, {
    name: b.name,
    redirect_uris: b.redirect_uris,
    post_logout_redirect_uris: b.post_logout_redirect_uris,
    rotate_secret: b.rotate_secret,
  });
  ctx.log.info({ client_id: made.client.client_id, fields: Object.keys(b) }, 'Client updated');
  return { status: 200, body: withSecret(made) };
});

export const deleteOidcClient = authenticated(async (ctx, input: HandlerInput<DeleteOidcClientData>): Promise<Reply<DeleteOidcClientResponses>> => {
  await clients.deleteClient(ctx.services.db, ctx.origin, input.path.client_id);
  ctx.log.info({ client_id: input.path.client_id }, 'Client deleted');
  return { status: 204, body: undefined };
});
