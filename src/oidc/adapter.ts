/**
 * The protocol library's storage adapter (docs/sign-in.md#the-provider): every model it keeps
 * (Session, Interaction, AuthorizationCode, AccessToken, RefreshToken, Grant, …) in
 * `oidc_payloads`, so any instance continues what another started; and the `Client` model read
 * from `oidc_clients` (the registered applications, src/domain/sign-in/clients.ts), never written.
 *
 * One adapter instance per model (the library constructs it with the model's name). Each call is
 * one round trip under the runtime role (no tenant). A row past its expiry is never read; every 16th write also
 * deletes up to 100 expired rows, so the table does not grow with abandoned sign-ins.
 */
import type { Config } from '../config';
import type { OidcClientMetadata } from '../context/sign-in';
import {
  consumePayload,
  deletePayload,
  deletePayloadsOfGrant,
  selectPayload,
  selectPayloadByUid,
  selectPayloadByUserCode,
  upsertPayload,
  type StoredPayload,
} from '../db/queries/oidc-payloads';
import type { Database } from '../db/tenant-scope';
import { clientMetadata } from '../domain/sign-in/clients';

type Payload = Record<string, unknown>;

const PURGE_EVERY = 16;
const PURGE_LIMIT = 100;

/** The library's metadata of a registered client: first-party, code flow with PKCE only. */
export function clientToMetadata(m: OidcClientMetadata): Payload {
  const { client } = m;
  return {
    client_id: client.client_id,
    client_name: client.name,
    application_type: 'web',
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    redirect_uris: [...client.redirect_uris],
    post_logout_redirect_uris: [...client.post_logout_redirect_uris],
    ...(client.type === 'public' || m.clientSecret === null
      ? { token_endpoint_auth_method: 'none' }
      : { token_endpoint_auth_method: 'client_secret_basic', client_secret: m.clientSecret }),
  };
}

function withConsumed(stored: StoredPayload | undefined): Payload | undefined {
  if (!stored) return undefined;
  // The library reads `consumed` (any truthy value) to refuse a second use.
  return stored.consumed ? { ...stored.payload, consumed: true } : stored.payload;
}

function text(v: unknown): string | null {
  return typeof v === 'string' && v !== '' ? v : null;
}

/** The adapter class the library instantiates per model, bound to the pool. */
export function pgAdapter(db: Database, config: Pick<Config, 'keyEncryptionSecret'>) {
  let writes = 0;
  return class PgAdapter {
    constructor(readonly name: string) {}

    async upsert(id: string, payload: Payload, expiresIn: number | undefined): Promise<void> {
      if (this.name === 'Client') throw new Error('Clients are registered through /api/setup/clients, not the provider.');
      const purge = ++writes % PURGE_EVERY === 0;
      await upsertPayload(
        db,
        {
          model: this.name,
          id,
          payload,
          grantId: text(payload.grantId),
          // A Session is also looked up by its uid.
          uid: text(payload.uid),
          userCode: text(payload.userCode),
          expiresIn: typeof expiresIn === 'number' && Number.isFinite(expiresIn) ? Math.max(1, Math.ceil(expiresIn)) : null,
        },
        purge ? PURGE_LIMIT : undefined,
      );
    }

    async find(id: string): Promise<Payload | undefined> {
      if (this.name === 'Client') {
        const found = await clientMetadata(db, config, id);
        return found ? clientToMetadata(found) : undefined;
      }
      return withConsumed(await selectPayload(db, this.name, id));
    }

    async findByUid(uid: string): Promise<Payload | undefined> {
      return withConsumed(await selectPayloadByUid(db, this.name, uid));
    }

    async findByUserCode(userCode: string): Promise<Payload | undefined> {
      return withConsumed(await selectPayloadByUserCode(db, this.name, userCode));
    }

    async consume(id: string): Promise<void> {
      await consumePayload(db, this.name, id);
    }

    async destroy(id: string): Promise<void> {
      await deletePayload(db, this.name, id);
    }

    async revokeByGrantId(grantId: string): Promise<void> {
      await deletePayloadsOfGrant(db, this.name, grantId);
    }
  };
}
