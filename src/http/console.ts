/**
 * The web console (console/, built by Vite into dist/console), served outside the API: no token,
 * no rate limit, no openapi-backend routing. The console is a single-page app that calls the API
 * with the signed-in person's bearer token, like any other client.
 *
 *   GET /console, /console/…        the page (index.html), with this instance's console settings
 *                                   embedded as JSON; revalidated on every visit
 *   GET /console/assets/<file>      the bundle's hashed files, cached for a year (immutable)
 *
 * The page has the same CSP as /docs (no inline script, nothing from the internet), plus the
 * origin of the provider the console signs in with in connect-src.
 */
import fs from 'node:fs';
import path from 'node:path';
import express, { type NextFunction, type Request, type RequestHandler, type Response, type Router } from 'express';
import type { Config } from '../config';
import { ApiError } from '../errors';
import { CONSOLE_CLIENT_ID } from '../domain/sign-in/console-client';
import { oidcApiAudience, oidcIssuer } from '../oidc/issuer';
import { asset, pageCsp, sendAsset, type Asset } from './static-assets';

export const CONSOLE_PREFIX = '/console';
const ASSET_PREFIX = `${CONSOLE_PREFIX}/assets/`;
const ALLOW = 'GET, HEAD';
const ASSET_NAME = /^[A-Za-z0-9._-]{1,200}$/;

const CONTENT_TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.woff2': 'font/woff2',
  '.json': 'application/json; charset=utf-8',
};

/** The package root: the nearest directory above this file that holds package.json. */
function packageRoot(): string {
  let dir = __dirname;
  while (!fs.existsSync(path.join(dir, 'package.json'))) {
    const up = path.dirname(dir);
    if (up === dir) throw new Error('tenant-service: package.json not found above src/http');
    dir = up;
  }
  return dir;
}

/** Where `npm run build` puts the console. */
export function consoleBuildDir(): string {
  return path.join(packageRoot(), 'dist', 'console');
}

/** The scopes the console asks the service's own provider for (a refresh token, the person's email and name). */
export const OWN_PROVIDER_SCOPES = 'openid email profile offline_access';

/**
 * The provider the console signs in with: the one the operator configured for it
 * (SERVICE_OIDC_ISSUER with SERVICE_CONSOLE_CLIENT_ID) when there is one, else the service's own
 * provider with the console's built-in client (docs/console.md#signing-in-through-the-services-own-provider).
 */
export function consoleSignIn(config: Config): { issuer: string; clientId: string; scopes: string; resource: string | null; audience: string | null; own: boolean } {
  if (config.oidcIssuer && config.consoleClientId) {
    return { issuer: config.oidcIssuer, clientId: config.consoleClientId, scopes: config.consoleScopes, resource: config.consoleResource, audience: config.consoleAudience, own: false };
  }
  return { issuer: oidcIssuer(config), clientId: CONSOLE_CLIENT_ID, scopes: OWN_PROVIDER_SCOPES, resource: oidcApiAudience(config), audience: null, own: true };
}

/** What the page needs to know about this instance (never a secret: it is public). */
export function consoleSettings(config: Config): Record<string, unknown> {
  return {
    oidc: consoleSignIn(config),
    authProvider: config.authProvider,
    multiTenantMode: config.multiTenantMode,
  };
}

/** index.html with the settings as a JSON data block (the CSP lets data through, never runs it). */
function renderIndex(html: string, config: Config): string {
  const json = JSON.stringify(consoleSettings(config)).replace(/</g, '\\u003c');
  const block = `<script type="application/json" id="console-config">${json}</script>`;
  return html.includes('</head>') ? html.replace('</head>', `${block}\n</head>`) : `${block}${html}`;
}

function notBuiltPage(dir: string): Asset {
  return asset(
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Console not built</title></head><body><main><h1>The console is not built</h1><p>This installation has no console bundle in ${dir.replace(/[<>&]/g, '')}. Run <code>npm run build</code> in the service's directory and restart it.</p></main></body></html>\n`,
    'text/html; charset=utf-8',
  );
}

function methodNotAllowed(req: Request, _res: Response, next: NextFunction): void {
  next(new ApiError('methodNotAllowed', `${req.method} is not allowed on ${req.path}.`, {}, { Allow: ALLOW }));
}

/**
 * The router for /console. The bundle is read once, at build time of the app; an installation
 * without it still starts (API-only) and /console says how to build it, with 503.
 */
export function createConsoleRouter(config: Config, dir: string = consoleBuildDir()): Router {
  const indexPath = path.join(dir, 'index.html');
  const built = fs.existsSync(indexPath);
  const page = built ? asset(renderIndex(fs.readFileSync(indexPath, 'utf8'), config), 'text/html; charset=utf-8') : notBuiltPage(dir);
  const assets = new Map<string, Asset>();
  if (built && fs.existsSync(path.join(dir, 'assets'))) {
    for (const name of fs.readdirSync(path.join(dir, 'assets'))) {
      const type = CONTENT_TYPES[path.extname(name)];
      if (type && ASSET_NAME.test(name)) assets.set(name, asset(fs.readFileSync(path.join(dir, 'assets', name)), type));
    }
  }
  // The service's own provider is served by this same origin ('self').
  const signIn = consoleSignIn(config);
  const csp = pageCsp(signIn.own ? [] : [new URL(signIn.issuer).origin]);

  const router = express.Router({ caseSensitive: true, strict: true });
  router.get(`${ASSET_PREFIX}:name`, (req, res, next) => {
    const a = assets.get(String(req.params.name));
    if (!a) return next(new ApiError('notFound', `The console has no asset ${req.path}.`));
    sendAsset(req, res, a, 'public, max-age=31536000, immutable').catch(next);
  });
  router.all(`${ASSET_PREFIX}:name`, methodNotAllowed);
  // Every other path under /console is a page of the app: its router reads the path.
  const sendPage = (req: Request, res: Response, next: NextFunction) => {
    if (!built) res.status(503);
    sendAsset(req, res, page, 'no-cache').catch(next);
  };
  router.get(/^\/console(\/.*)?$/, csp, sendPage);
  router.all(/^\/console(\/.*)?$/, methodNotAllowed);
  return router;
}

/** Stage: hands only /console and /console/… to the console router. */
export function consoleStage(router: Router): RequestHandler {
  return (req, res, next) => {
    const p = req.path;
    if (p === CONSOLE_PREFIX || p.startsWith(`${CONSOLE_PREFIX}/`)) return router(req, res, next);
    next();
  };
}
