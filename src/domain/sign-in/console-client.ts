/**
 * The console's built-in client of the service's own provider (docs/console.md#signing-in-through-the-services-own-provider):
 * a public client (authorization code + PKCE, no secret) whose redirect URIs are the console's,
 * `<SERVICE_PUBLIC_URL>/console/callback` and `<SERVICE_PUBLIC_URL>/console/`, on the same base
 * URL as the provider's issuer. Registered by every instance at boot; instances starting together
 * take turns (the registrations' advisory lock), and a boot with another public URL moves its
 * URIs. The clients API refuses to change or delete it.
 */
import type { Logger } from 'pino';
import { serviceBaseUrl, type Config } from '../../config';
import type { OidcClient } from '../../context/sign-in';
import { lockAndCountOidcClients, selectOidcClient, updateOidcClient } from '../../db/queries/oidc-clients';
import { withService, type Database } from '../../db/tenant-scope';
import { createClient } from './clients';

/** The console's client id at the service's own provider. */
export const CONSOLE_CLIENT_ID = 'tenant-service-console';
export const CONSOLE_CLIENT_NAME = 'Console';

/** The console's redirect URIs on this instance's public base URL. */
export function consoleClientUris(config: Pick<Config, 'publicUrl' | 'tenantTokenIssuer'>): { redirectUri: string; postLogoutRedirectUri: string } {
  const base = serviceBaseUrl(config);
  return { redirectUri: `${base}/console/callback`, postLogoutRedirectUri: `${base}/console/` };
}

const sameList = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((v, i) => v === b[i]);

/**
 * Makes sure the console's built-in client exists with this instance's URIs; what it did:
 * `created`, `updated` (the public URL changed) or `unchanged`. A client of that id that is not
 * built in (it cannot be made through the API: ids are random) is left alone: `foreign`.
 */
export async function ensureConsoleClient(
  db: Database,
  config: Pick<Config, 'publicUrl' | 'tenantTokenIssuer' | 'keyEncryptionSecret'>,
): Promise<{ outcome: 'created' | 'updated' | 'unchanged' | 'foreign'; client: OidcClient }> {
  const { redirectUri, postLogoutRedirectUri } = consoleClientUris(config);
  return withService(db, async (trx) => {
    // Serializes with registrations and with other instances booting: one inserts, the others read it.
    await lockAndCountOidcClients(trx);
    const found = await selectOidcClient(trx, CONSOLE_CLIENT_ID, true);
    if (!found) {
      const { client } = await createClient(
        trx,
        config,
        { name: CONSOLE_CLIENT_NAME, type: 'public', redirect_uris: [redirectUri], post_logout_redirect_uris: [postLogoutRedirectUri] },
        { clientId: CONSOLE_CLIENT_ID, builtIn: true },
      );
      return { outcome: 'created' as const, client };
    }
    const c = found.client;
    if (!c.built_in) return { outcome: 'foreign' as const, client: c };
    if (sameList(c.redirect_uris, [redirectUri]) && sameList(c.post_logout_redirect_uris, [postLogoutRedirectUri])) return { outcome: 'unchanged' as const, client: c };
    const client = await updateOidcClient(trx, CONSOLE_CLIENT_ID, { redirectUris: [redirectUri], postLogoutRedirectUris: [postLogoutRedirectUri] });
    return { outcome: 'updated' as const, client };
  });
}

/**
 * At boot: ensures the console's client and says what changed. A failure is logged, not fatal:
 * the API serves without it, the console's own-provider sign-in is refused until a boot succeeds.
 */
export async function registerConsoleClientAtBoot(
  db: Database,
  config: Pick<Config, 'publicUrl' | 'tenantTokenIssuer' | 'keyEncryptionSecret'>,
  logger: Pick<Logger, 'info' | 'warn' | 'error'>,
): Promise<void> {
  try {
    const { outcome, client } = await ensureConsoleClient(db, config);
    if (outcome === 'created' || outcome === 'updated') logger.info({ client_id: client.client_id, redirect_uris: client.redirect_uris }, `The console's built-in sign-in client was ${outcome}`);
    if (outcome === 'foreign') logger.warn({ client_id: client.client_id }, "A client that is not built in holds the console's client id: the console cannot sign in through the service's own provider");
  } catch (err) {
    logger.error({ err }, "The console's built-in sign-in client could not be registered; the next boot tries again");
  }
}
