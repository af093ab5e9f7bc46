/**
 * The product's applications registered with the provider (docs/sign-in.md#clients): their
 * secrets are generated here, stored sealed under SERVICE_KEY_ENCRYPTION_SECRET when it is set,
 * and shown only in the answer that made them (the create, or a rotation). Platform admins
 * manage them; built-in clients (the console) are the service's own and never change here.
 */
import crypto from 'node:crypto';
import type { Config } from '../../config';
import type { OidcClient, OidcClientMetadata } from '../../context/sign-in';
import {
  deleteOidcClient,
  insertOidcClient,
  lockAndCountOidcClients,
  selectOidcClient,
  selectOidcClientNow,
  selectOidcClients,
  updateOidcClient,
  type OidcClientChanges,
} from '../../db/queries/oidc-clients';
import { withService, type Database, type Transaction } from '../../db/tenant-scope';
import { ApiError } from '../../errors';
import { changedFields, recordEvent, type EventOrigin } from '../events';
import { openClientSecret, sealClientSecret } from '../key-encryption';
import { refusePlainSecretDowngrade } from '../secrets-at-rest';
import { checkClientName, checkRedirectUris } from './client-uris';

/** Registered clients besides the built-in ones (409 beyond; docs/sign-in.md#clients). */
export const MAX_CLIENTS = 100;

export interface ClientInput {
  readonly name: string;
  readonly type: OidcClient['type'];
  readonly redirect_uris: readonly string[];
  readonly post_logout_redirect_uris?: readonly string[];
}

function storedForm(config: Pick<Config, 'keyEncryptionSecret'>, clientId: string, secret: string): string {
  return config.keyEncryptionSecret === null ? secret : sealClientSecret(config.keyEncryptionSecret, clientId, secret);
}

const newSecret = () => crypto.randomBytes(32).toString('base64url');

/**
 * Registers a client, unchecked (the provider's built-in clients, tests); its secret
 * (confidential clients only) is returned this once. A confidential client is refused (503) by an
 * instance without SERVICE_KEY_ENCRYPTION_SECRET while the database holds encrypted secrets.
 */
export async function createClient(
  trx: Transaction,
  config: Pick<Config, 'keyEncryptionSecret'>,
  input: ClientInput,
  opts: { clientId?: string; builtIn?: boolean } = {},
): Promise<{ client: OidcClient; clientSecret: string | null }> {
  // Hex: an id never starts with '-', which a command line would read as an option.
  const clientId = opts.clientId ?? crypto.randomBytes(16).toString('hex');
  const clientSecret = input.type === 'confidential' ? newSecret() : null;
  if (clientSecret !== null) await refusePlainSecretDowngrade(trx, config.keyEncryptionSecret, 'register a confidential client');
  const client = await insertOidcClient(trx, {
    clientId,
    name: input.name,
    type: input.type,
    redirectUris: input.redirect_uris,
    postLogoutRedirectUris: input.post_logout_redirect_uris ?? [],
    storedSecret: clientSecret === null ? null : storedForm(config, clientId, clientSecret),
    builtIn: opts.builtIn ?? false,
  });
  return { client, clientSecret };
}

/** A client with its secret opened, for the provider library; null when there is no such client. */
export async function clientMetadata(db: Database, config: Pick<Config, 'keyEncryptionSecret'>, clientId: string): Promise<OidcClientMetadata | null> {
  const found = await selectOidcClientNow(db, clientId);
  if (!found) return null;
  return { client: found.client, clientSecret: found.storedSecret === null ? null : openClientSecret(config.keyEncryptionSecret, clientId, found.storedSecret) };
}

/** What an event says of a client: never its secret. */
function clientData(c: OidcClient): Record<string, unknown> {
  return { client_id: c.client_id, name: c.name, type: c.type, redirect_uris: c.redirect_uris, post_logout_redirect_uris: c.post_logout_redirect_uris };
}

const notFound = (clientId: string) => new ApiError('notFound', `No client with id '${clientId}'.`);

/** Registers a client after checking every field (the API's create); event `client.created`. */
export async function registerClient(
  db: Database,
  config: Pick<Config, 'keyEncryptionSecret'>,
  origin: EventOrigin,
  input: ClientInput,
): Promise<{ client: OidcClient; clientSecret: string | null }> {
  const checked: ClientInput = {
    name: checkClientName('body.name', input.name),
    type: input.type,
    redirect_uris: checkRedirectUris('body.redirect_uris', input.redirect_uris, input.type, 1),
    post_logout_redirect_uris: checkRedirectUris('body.post_logout_redirect_uris', input.post_logout_redirect_uris ?? [], input.type, 0),
  };
  return withService(db, async (trx) => {
    if ((await lockAndCountOidcClients(trx)) >= MAX_CLIENTS) throw new ApiError('conflict', `This service already has ${MAX_CLIENTS} registered clients; delete one first.`);
    const created = await createClient(trx, config, checked);
    await recordEvent(trx, origin, { action: 'client.created', tenantId: null, target: { type: 'client', id: created.client.client_id }, data: { client: clientData(created.client) } });
    return created;
  });
}

export async function listClients(db: Database): Promise<OidcClient[]> {
  return withService(db, (trx) => selectOidcClients(trx, MAX_CLIENTS + 100), { readOnly: true });
}

export async function getClient(db: Database, clientId: string): Promise<OidcClient> {
  const found = await withService(db, (trx) => selectOidcClient(trx, clientId), { readOnly: true });
  if (!found) throw notFound(clientId);
  return found.client;
}

export interface ClientPatch {
  readonly name?: string;
  readonly redirect_uris?: readonly string[];
  readonly post_logout_redirect_uris?: readonly string[];
  /** A new secret replaces the old one at once (confidential clients only). */
  readonly rotate_secret?: boolean;
}

function builtInRefusal(clientId: string): ApiError {
  return new ApiError('conflict', `Client '${clientId}' is built in: the service manages it, so it cannot be changed or deleted.`);
}

/**
 * Changes the fields present; with `rotate_secret`, a new secret (returned this once) replaces
 * the old one, which stops working at once. Event `client.updated` (`before`/`after` of the
 * changed fields, `secret_rotated`).
 */
export async function updateClient(
  db: Database,
  config: Pick<Config, 'keyEncryptionSecret'>,
  origin: EventOrigin,
  clientId: string,
  patch: ClientPatch,
): Promise<{ client: OidcClient; clientSecret: string | null }> {
  const name = patch.name === undefined ? undefined : checkClientName('body.name', patch.name);
  return withService(db, async (trx) => {
    const found = await selectOidcClient(trx, clientId, true);
    if (!found) throw notFound(clientId);
    const current = found.client;
    if (current.built_in) throw builtInRefusal(clientId);
    const changes: { -readonly [K in keyof OidcClientChanges]: OidcClientChanges[K] } = {};
    if (name !== undefined) changes.name = name;
    if (patch.redirect_uris !== undefined) changes.redirectUris = checkRedirectUris('body.redirect_uris', patch.redirect_uris, current.type, 1);
    if (patch.post_logout_redirect_uris !== undefined) {
      changes.postLogoutRedirectUris = checkRedirectUris('body.post_logout_redirect_uris', patch.post_logout_redirect_uris, current.type, 0);
    }
    let clientSecret: string | null = null;
    if (patch.rotate_secret === true) {
      if (current.type !== 'confidential') throw new ApiError('validation', `body.rotate_secret: client '${clientId}' is public and has no secret.`);
      await refusePlainSecretDowngrade(trx, config.keyEncryptionSecret, "rotate a client's secret");
      clientSecret = newSecret();
      changes.storedSecret = storedForm(config, clientId, clientSecret);
    }
    const client = await updateOidcClient(trx, clientId, changes);
    const diff = changedFields(clientData(current), clientData(client));
    await recordEvent(trx, origin, {
      action: 'client.updated',
      tenantId: null,
      target: { type: 'client', id: clientId },
      data: { ...diff, ...(clientSecret !== null ? { secret_rotated: true } : {}) },
    });
    return { client, clientSecret };
  });
}

/**
 * Deletes a client: the provider looks its client up at every use of a code or refresh token,
 * so what it was granted stops working with this commit (its JWT access tokens live until their
 * short expiry). Event `client.deleted`.
 */
export async function deleteClient(db: Database, origin: EventOrigin, clientId: string): Promise<void> {
  await withService(db, async (trx) => {
    const found = await selectOidcClient(trx, clientId, true);
    if (!found) throw notFound(clientId);
    if (found.client.built_in) throw builtInRefusal(clientId);
    await deleteOidcClient(trx, clientId);
    await recordEvent(trx, origin, { action: 'client.deleted', tenantId: null, target: { type: 'client', id: clientId }, data: { client: clientData(found.client) } });
  });
}
