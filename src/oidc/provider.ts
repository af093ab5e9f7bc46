/**
 * The provider of one instance (see ./index.ts for the seam): the protocol library built from the
 * shared key set, cookie keys and storage, rebuilt when the key set changes (a rotation), and
 * `finishSignIn`, which ends an interaction with the sign-in the pages settled.
 */
import type { RequestHandler } from 'express';
import express from 'express';
import type Provider from 'oidc-provider' with { 'resolution-mode': 'import' };
import type { Config } from '../config';
import type { AppServices } from '../context/app-services';
import type { InteractionRouterFactory, Oidc, OrganizationSwitch, SignInChoice } from '../context/sign-in';
import { updateGrantSignIn } from '../db/queries/oidc-payloads';
import { readAccount } from './claims';
import { providerConfiguration, OIDC_SCOPES } from './configuration';
import { oidcApiAudience, oidcIssuer } from './issuer';
import { cookieKeys, loadOidcKeys, OidcKeysUnavailableError, type LoadedKeys } from './keys';

export type { InteractionRouterFactory, Oidc, SignInChoice };

export interface OidcOptions {
  /** The sign-in pages (src/oidc/pages; tests may pass a harness through services.oidcInteractions). */
  readonly interactionRouter: InteractionRouterFactory;
  /** How often an instance rereads the key set (ms); default 60 s. */
  readonly keyRefreshMs?: number;
}

const KEY_REFRESH_MS = 60_000;
const RETRY_MS = 5_000;

type ProviderClass = typeof Provider;
let providerClass: Promise<ProviderClass> | null = null;
/** The ESM-only library, loaded once per process. */
function loadProviderClass(): Promise<ProviderClass> {
  providerClass ??= import('oidc-provider').then((m) => m.default);
  return providerClass;
}

interface Built {
  readonly provider: Provider;
  readonly callback: RequestHandler;
  readonly keys: LoadedKeys;
  readonly checkAt: number;
}

export function createOidc(config: Config, services: AppServices, opts: OidcOptions): Oidc {
  const issuer = oidcIssuer(config);
  const audience = oidcApiAudience(config);
  const refreshMs = opts.keyRefreshMs ?? KEY_REFRESH_MS;
  const db = services.db;
  let built: Built | null = null;
  let building: Promise<Built> | null = null;
  let cookies: Promise<string[]> | null = null;
  // The sign-in pages' answer to organization= on a live session (src/oidc/pages/switch.ts); none: they decide in an interaction.
  let organizationSwitch: OrganizationSwitch | null = null;

  async function build(previous: Built | null): Promise<Built> {
    const keys = await loadOidcKeys(db, config.keyEncryptionSecret);
    const next = (checkAt: number) => Math.min(Date.now() + refreshMs, keys.nextChangeAt ?? Infinity, checkAt);
    if (previous && previous.keys.signature === keys.signature) return { ...previous, keys, checkAt: next(Infinity) };
    cookies ??= cookieKeys(db, config.keyEncryptionSecret).catch((err: unknown) => {
      cookies = null;
      throw err;
    });
    const Provider = await loadProviderClass();
    const provider = new Provider(issuer, providerConfiguration({ config, db, issuer, audience, keys: keys.keys, cookieKeys: await cookies, switchOrganization: organizationSwitch ?? undefined }));
    // The forwarded headers are rewritten by the stage from express's own reading (SERVICE_TRUST_PROXY).
    provider.proxy = true;
    provider.on('server_error', (_ctx, err) => services.logger.error({ err }, 'OpenID provider error'));
    return { provider, callback: provider.callback() as unknown as RequestHandler, keys, checkAt: next(Infinity) };
  }

  function current(): Promise<Built> {
    const b = built;
    if (b && Date.now() < b.checkAt) return Promise.resolve(b);
    building ??= build(b)
      .then((nb) => {
        built = nb;
        return nb;
      })
      .finally(() => {
        building = null;
      });
    if (!b) return building;
    // Stale: rebuilt in the background; the current provider serves meanwhile.
    building.catch((err: unknown) => {
      services.logger.warn({ err }, 'OpenID provider keys could not be reloaded; the current set stays in use');
      if (built) built = { ...built, checkAt: Date.now() + RETRY_MS };
    });
    return Promise.resolve(b);
  }

  const oidc: Oidc = {
    issuer,
    audience,
    handle: (req, res, next) => {
      current().then(
        (b) => b.callback(req, res, next),
        (err: unknown) => {
          if (!(err instanceof OidcKeysUnavailableError)) services.logger.error({ err }, 'OpenID provider unavailable');
          else services.logger.error({ reason: err.message }, 'OpenID provider unavailable');
          if (res.headersSent) return;
          res.status(503).set({ 'Retry-After': '60', 'Cache-Control': 'no-store' }).json({ error: 'temporarily_unavailable', error_description: 'The sign-in service is not available; retry later.' });
        },
      );
    },
    provider: async () => (await current()).provider,
    setOrganizationSwitch: (fn) => {
      organizationSwitch = fn;
    },
    publicKeys: async () => (await current()).keys.keys.map(({ kty, n, e, kid, alg, use }) => ({ kty, n, e, kid, alg, use })),
    interactionDetails: async (req, res) => (await current()).provider.interactionDetails(req, res),
    finishSignIn: async (req, res, choice) => {
      const provider = (await current()).provider;
      const interaction = await provider.interactionDetails(req, res);
      if (!(await readAccount(db, choice.accountId))) {
        await provider.interactionFinished(req, res, { error: 'access_denied', error_description: 'The account does not exist.' }, { mergeWithLastSubmission: false });
        return;
      }
      const clientId = String(interaction.params.client_id);
      const requested = typeof interaction.params.scope === 'string' ? interaction.params.scope : 'openid';
      const scope = requested
        .split(' ')
        .filter((s) => (OIDC_SCOPES as readonly string[]).includes(s))
        .join(' ');
      const grant = new provider.Grant({ accountId: choice.accountId, clientId });
      grant.addOIDCScope(scope);
      grant.addResourceScope(audience, scope);
      const grantId = await grant.save();
      await updateGrantSignIn(db, grantId, { tenantId: choice.tenantId, connectionId: choice.connectionId, method: choice.method });
      await provider.interactionFinished(
        req,
        res,
        { login: { accountId: choice.accountId, amr: [choice.method === 'sso' ? 'fed' : 'otp'] }, consent: { grantId } },
        { mergeWithLastSubmission: false },
      );
    },
  };

  // The pages first (their own router), then the protocol.
  const interactions = opts.interactionRouter(oidc);
  const router = express.Router({ caseSensitive: true, strict: false });
  router.use('/oidc/interaction', interactions);
  router.use('/oidc', oidc.handle);
  return { ...oidc, handle: router };
}
