/**
 * Tag `sso`: a tenant's own single sign-on connections and `sso_required` (its admins, and
 * platform admins through X-Tenant). Rules: docs/sso.md.
 */
import type {
  CreateSsoConnectionData,
  CreateSsoConnectionResponses,
  DeleteSsoConnectionData,
  DeleteSsoConnectionResponses,
  GetSsoConnectionData,
  GetSsoConnectionResponses,
  GetSsoSettingsResponses,
  ListSsoConnectionsResponses,
  SsoConnection,
  SsoSettings as SsoSettingsBody,
  UpdateSsoConnectionData,
  UpdateSsoConnectionResponses,
  UpdateSsoSettingsData,
  UpdateSsoSettingsResponses,
} from '../../generated/types.gen';
import type { Config } from '../config';
import type { StoredSsoConnection } from '../context/records';
import * as sso from '../domain/sso/connections';
import { checkIssuer } from '../domain/sso/oidc';
import { certificateInfo } from '../domain/sso/saml-metadata';
import { tenantRead, tenantScoped, type HandlerInput, type Reply } from './types';


function toConnection(config: Config, c: StoredSsoConnection): SsoConnection {
  const base = sso.ssoSettings(config).publicUrl;
  const common = { connection_id: c.id, type: c.type, name: c.name, status: c.status, created_at: c.createdAt.toISOString(), updated_at: c.updatedAt.toISOString() };
  if (c.type === 'oidc') return { ...common, redirect_uri: sso.oidcRedirectUri(base), issuer: c.oidcIssuer!, client_id: c.oidcClientId!, scopes: [...(c.oidcScopes ?? [])] };
  const sp = sso.samlEntityId(base, c.id);
  return { ...common, sp_entity_id: sp, acs_url: `${sp}/acs`, sp_metadata_url: `${sp}/metadata`, idp_entity_id: c.samlIdpEntityId!, idp_sso_url: c.samlIdpSsoUrl!, idp_certificate: certificateInfo(c.samlIdpCertificate!) };
}

const toSettings = (s: sso.SsoState): SsoSettingsBody => ({ sso_required: s.ssoRequired, connection_id: s.connection?.id ?? null, updated_at: s.updatedAt?.toISOString() ?? null });

export const listSsoConnections = tenantScoped(async (ctx): Promise<Reply<ListSsoConnectionsResponses>> => ({
  status: 200,
  body: { connections: (await sso.listConnections(ctx.trx, ctx.tenant.id)).map((c) => toConnection(ctx.config, c)) },
}));

/** No transaction is held while an OIDC issuer is discovered: the entry is read, then the domain code opens its own. */
export const createSsoConnection = tenantRead(async (ctx, input: HandlerInput<CreateSsoConnectionData>): Promise<Reply<CreateSsoConnectionResponses>> => {
  const b = input.body;
  const c =
    b.type === 'oidc'
      ? await sso.createOidcConnection(ctx.services.db, sso.ssoSettings(ctx.config), checkIssuer, ctx.origin, ctx.tenant.id, b)
      : await sso.createSamlConnectionIn(ctx.services.db, sso.ssoSettings(ctx.config), ctx.origin, ctx.tenant.id, b);
  ctx.log.info({ connection_id: c.id, type: c.type }, 'SSO connection created');
  return { status: 201, body: toConnection(ctx.config, c) };
});

export const getSsoConnection = tenantScoped(async (ctx, input: HandlerInput<GetSsoConnectionData>): Promise<Reply<GetSsoConnectionResponses>> => ({
  status: 200,
  body: toConnection(ctx.config, await sso.getConnection(ctx.trx, ctx.tenant.id, input.path.connection_id)),
}));

export const updateSsoConnection = tenantScoped(async (ctx, input: HandlerInput<UpdateSsoConnectionData>): Promise<Reply<UpdateSsoConnectionResponses>> => {
  const c = await sso.updateSsoConnection(ctx.trx, sso.ssoSettings(ctx.config), ctx.origin, ctx.tenant.id, input.path.connection_id, input.body);
  ctx.log.info({ connection_id: c.id, status: c.status }, 'SSO connection updated');
  return { status: 200, body: toConnection(ctx.config, c) };
});

export const deleteSsoConnection = tenantScoped(async (ctx, input: HandlerInput<DeleteSsoConnectionData>): Promise<Reply<DeleteSsoConnectionResponses>> => {
  await sso.deleteSsoConnection(ctx.trx, ctx.origin, ctx.tenant.id, input.path.connection_id);
  ctx.log.info({ connection_id: input.path.connection_id }, 'SSO connection deleted');
  return { status: 204, body: undefined };
});

export const getSsoSettings = tenantScoped(async (ctx): Promise<Reply<GetSsoSettingsResponses>> => ({
  status: 200,
  body: toSettings(await sso.getSso(ctx.trx, ctx.tenant.id)),
}));

export const updateSsoSettings = tenantScoped(async (ctx, input: HandlerInput<UpdateSsoSettingsData>): Promise<Reply<UpdateSsoSettingsResponses>> => {
  const s = await sso.setSsoRequired(ctx.trx, ctx.origin, ctx.tenant.id, input.body.sso_required);
  ctx.log.info({ sso_required: s.ssoRequired }, 'SSO settings set');
  return { status: 200, body: toSettings(s) };
});
