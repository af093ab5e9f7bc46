/**
 * The product's applications registered with the provider (docs/sign-in.md#clients): their
 * secrets are generated here, stored sealed under SERVICE_KEY_ENCRYPTION_SECRET when it is set,
 * and shown only in the create's answer.
 */
import crypto from 'node:crypto';
import type { Config } from '../../config';
import type { OidcClient, OidcClientMetadata } from '../../context/sign-in';
import { insertOidcClient, selectOidcClient } from '../../db/queries/oidc-clients';
import type { Transaction } from '../../db/tenant-scope';
import { openClientSecret, sealClientSecret } from '../key-encryption';

export interface ClientInput {
  readonly name: string;
  readonly type: OidcClient['type'];
  readonly redirect_uris: readonly string[];
  readonly post_logout_redirect_uris?: readonly string[];
}

/** Registers a client; its secret (confidential clients only) is returned this once. */
export async function createClient(
  trx: Transaction,
  config: Pick<Config, 'keyEncryptionSecret'>,
  input: ClientInput,
  opts: { clientId?: string; builtIn?: boolean } = {},
): Promise<{ client: OidcClient; clientSecret: string | null }> {
  const clientId = opts.clientId ?? crypto.randomBytes(16).toString('base64url');
  const clientSecret = input.type === 'confidential' ? crypto.randomBytes(32).toString('base64url') : null;
  const storedSecret =
    clientSecret === null ? null : config.keyEncryptionSecret === null ? clientSecret : sealClientSecret(config.keyEncryptionSecret, clientId, clientSecret);
  const client = await insertOidcClient(trx, {
    clientId,
    name: input.name,
    type: input.type,
    redirectUris: input.redirect_uris,
    postLogoutRedirectUris: input.post_logout_redirect_uris ?? [],
    storedSecret,
    builtIn: opts.builtIn ?? false,
  });
  return { client, clientSecret };
}

/** A client with its secret opened, for the provider library; null when there is no such client. */
export async function clientMetadata(trx: Transaction, config: Pick<Config, 'keyEncryptionSecret'>, clientId: string): Promise<OidcClientMetadata | null> {
  const found = await selectOidcClient(trx, clientId);
  if (!found) return null;
  return { client: found.client, clientSecret: found.storedSecret === null ? null : openClientSecret(config.keyEncryptionSecret, clientId, found.storedSecret) };
}
