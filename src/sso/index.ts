/**
 * Each tenant's own SSO connection, its browser side (docs/sso.md): the `SsoConnector` the
 * provider's sign-in pages call, and the routes the identity providers send people back to —
 * `GET /sso/oidc/callback`, `POST /sso/saml/:connection_id/acs` — plus the public SP metadata
 * `GET /sso/saml/:connection_id/metadata`. A callback hands what the IdP vouched for to the
 * `SignInCompleter`, or its refusal (a reason code, never a 500) to `failFederated`.
 *
 *   const sso = createSso(config, services);
 *   sso.connector            // → the provider's sign-in pages
 *   ssoStage(sso.router(completer))  // → the pipeline, before the bearer-token stage
 *
 * Once `router(completer)` was called, a `start` that cannot send the person anywhere (unknown or
 * inactive connection, the provider's discovery failing) answers through `failFederated`;
 * before, it rejects with the `SsoFailure`.
 */
import express, { type Request, type RequestHandler, type Response, type Router } from 'express';
import type { Logger } from 'pino';
import type { Config } from '../config';
import type { SignInCompleter, SsoConnector, UpstreamIdentity } from '../context/sign-in';
import type { Database } from '../db/tenant-scope';
import { outsideSignInSlot, readBodyOutsideSignInSlot } from '../http/sign-in-work';
import { publicBase, oidcRedirectUri, ssoSettings } from '../domain/sso/connections';
import { spMetadata } from '../domain/sso/saml';
import { anyConnection, finishOidc, finishSaml, samlConfig, SsoFailure, startSignIn, tenantSso } from '../domain/sso/sign-in';

export interface SsoServices {
  readonly db: Database;
  readonly logger: Logger;
}

export interface Sso {
  readonly connector: SsoConnector;
  router(completer: SignInCompleter): Router;
}


/** Routes `/sso/…` to the SSO router; everything else goes on. */
export function ssoStage(router: Router): RequestHandler {
  return (req, res, next) => {
    if (req.path.startsWith('/sso/')) return router(req, res, next);
    next();
  };
}

const failureOf = (err: unknown): SsoFailure =>
  err instanceof SsoFailure ? err : new SsoFailure({ reason: 'internal_error', detail: 'The sign-in could not be completed (see the service log).', connectionId: null, tenantId: null }, null);

export function createSso(config: Config, services: SsoServices): Sso {
  const settings = ssoSettings(config);
  const log = services.logger.child({ component: 'sso' });

  /** The completer the router was built with: a start that fails answers through it too. */
  let registered: SignInCompleter | null = null;

  const connector: SsoConnector = {
    tenantSso: (tenantId) => tenantSso(services.db, tenantId),
    async start(res, connectionId, handoff) {
      let url: string;
      try {
        url = await startSignIn(services.db, settings, connectionId, handoff, (work) => outsideSignInSlot(res.req, work));
      } catch (err) {
        if (!(err instanceof SsoFailure) || registered === null) throw err;
        log.info({ reason: err.failure.reason, connection_id: err.failure.connectionId, tenant_id: err.failure.tenantId }, 'SSO sign-in not started');
        await registered.failFederated(res.req, res, handoff.interactionUid, err.failure);
        return;
      }
      res.redirect(303, url);
    },
  };

  function router(completer: SignInCompleter): Router {
    registered = completer;
    const r = express.Router({ caseSensitive: true, strict: true });

    /** Runs a callback: its identity to the completer, any refusal to failFederated; never a 500 of ours. */
    const callback = (finish: (req: Request) => Promise<{ interactionUid: string; identity: UpstreamIdentity }>) => async (req: Request, res: Response) => {
      let done: { interactionUid: string; identity: UpstreamIdentity };
      try {
        done = await finish(req);
      } catch (err) {
        const f = failureOf(err);
        if (!(err instanceof SsoFailure)) log.error({ err }, 'SSO callback failed');
        else log.info({ reason: f.failure.reason, connection_id: f.failure.connectionId, tenant_id: f.failure.tenantId }, 'SSO sign-in refused');
        await completer.failFederated(req, res, f.interactionUid, f.failure);
        return;
      }
      await completer.completeFederated(req, res, done.interactionUid, done.identity);
    };

    r.get('/sso/oidc/callback', callback(async (req) => {
      const q = req.originalUrl.indexOf('?');
      const url = new URL(`${oidcRedirectUri(publicBase(settings))}${q >= 0 ? req.originalUrl.slice(q) : ''}`);
      return finishOidc(services.db, settings, url, (work) => outsideSignInSlot(req, work));
    }));

    const acsForm = express.urlencoded({ extended: false, limit: '1mb', parameterLimit: 10 });
    r.post(
      '/sso/saml/:connection_id/acs',
      // The browser's upload is read with the sign-in slot given back: a slow one holds none.
      (req, res, next) => void readBodyOutsideSignInSlot(req, res, acsForm).then((err) => next(err)),
      callback(async (req) => finishSaml(services.db, settings, String(req.params.connection_id), (req.body as Record<string, unknown> | undefined)?.SAMLResponse as string | undefined)),
    );

    r.get('/sso/saml/:connection_id/metadata', async (req, res) => {
      try {
        // Served for an inactive connection too: its admin registers the SP at the IdP before activating it.
        const c = await anyConnection(services.db, String(req.params.connection_id));
        if (c === null || c.type !== 'saml') throw new SsoFailure({ reason: 'connection_unknown', detail: '', connectionId: null, tenantId: null }, null);
        res.status(200).type('application/samlmetadata+xml').send(spMetadata(samlConfig(settings, c)));
      } catch (err) {
        if (!(err instanceof SsoFailure)) log.error({ err }, 'SP metadata failed');
        res.status(404).type('text/plain').send('No such SAML connection.\n');
      }
    });

    // A body too large or malformed at the ACS: the person sees the failure page, not a 500.
    r.use((err: unknown, req: Request, res: Response, next: (e?: unknown) => void) => {
      if (res.headersSent) return next(err);
      const f = new SsoFailure({ reason: 'saml_response_malformed', detail: 'The POST body could not be read.', connectionId: null, tenantId: null }, null);
      completer.failFederated(req, res, null, f.failure).catch(next);
    });
    return r;
  }

  return { connector, router };
}
