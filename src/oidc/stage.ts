/**
 * The pipeline stage of the provider (docs/architecture.md#how-a-request-is-handled): `/oidc` and
 * `/oidc/*` go to the provider's router, never to the API's stages (no X-Tenant check, no bearer
 * token, no rate limit of an operation, no JSON error body).
 *
 * The protocol library reads the scheme, host and client address from the X-Forwarded-* headers
 * (its `proxy` is on); the stage rewrites them from express's own reading, which trusts them only
 * from the proxies SERVICE_TRUST_PROXY names, so a client cannot claim another origin.
 */
import type { RequestHandler } from 'express';
import type { Logger } from 'pino';
import { OIDC_MOUNT_PATH } from './issuer';
import { errorPage } from './protocol-pages';

/** Pages the provider renders: no script, forms posting to itself, redirects to registered clients only. */
const PAGE_CSP = "default-src 'none'; img-src 'self' data:; style-src 'self'; form-action 'self' https: http:; frame-ancestors 'none'; base-uri 'none'";

export function oidcStage(handler: RequestHandler, logger: Logger): RequestHandler {
  return (req, res, next) => {
    const p = req.path;
    if (p !== OIDC_MOUNT_PATH && !p.startsWith(`${OIDC_MOUNT_PATH}/`)) return next();
    req.headers['x-forwarded-proto'] = req.protocol;
    req.headers['x-forwarded-host'] = req.host;
    if (req.ip) req.headers['x-forwarded-for'] = req.ip;
    res.setHeader('Content-Security-Policy', PAGE_CSP);
    handler(req, res, (err?: unknown) => {
      // Nothing under /oidc falls through to the API: an error of the pages is shown as a page.
      if (res.headersSent) return;
      if (!err) return void res.status(404).type('html').send(errorPage({ error: 'not_found', error_description: 'There is no such page.' }));
      const e = err as { statusCode?: unknown; status?: unknown; error?: unknown; error_description?: unknown };
      const status = typeof e.statusCode === 'number' ? e.statusCode : typeof e.status === 'number' ? e.status : 500;
      if (status >= 500 || typeof e.error !== 'string') {
        logger.error({ err, request_id: res.getHeader('X-Request-Id') }, 'Sign-in page failed');
        return void res.status(500).type('html').send(errorPage({ error: 'server_error', error_description: 'The sign-in could not continue; try again.' }));
      }
      res.status(status).type('html').send(errorPage({ error: e.error, error_description: typeof e.error_description === 'string' ? e.error_description : undefined }));
    });
  };
}
