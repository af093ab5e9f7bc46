/**
 * The contract as served and a browsable API reference, outside the API itself: no token, no
 * rate limit, no openapi-backend routing.
 *
 *   GET /openapi.json, /openapi.yaml   openapi.yaml with `servers` set to this instance's URL
 *   GET /docs                          the API reference (Scalar), rendered from /openapi.json
 *   GET /docs/assets/standalone.js     Scalar's self-contained browser bundle, from node_modules
 *   GET /docs/assets/init.js           starts Scalar with the configuration embedded in /docs
 *
 * Everything the page needs comes from the service itself, so it works without internet, and
 * helmet's global Content-Security-Policy still applies (see `pageCsp` in static-assets.ts).
 */
import fs from 'node:fs';
import path from 'node:path';
import express, { type NextFunction, type Request, type RequestHandler, type Response, type Router } from 'express';
import yaml from 'js-yaml';
import type { Config } from '../config';
import { loadOpenApiDocument } from '../openapi-document';
import { ApiError } from '../errors';
import { asset, pageCsp, sendAsset, type Asset } from './static-assets';

/** The paths this router answers; the contract tests treat them as outside the API contract. */
export const DOCS_PATHS = {
  json: '/openapi.json',
  yaml: '/openapi.yaml',
  page: '/docs',
  bundle: '/docs/assets/standalone.js',
  init: '/docs/assets/init.js',
} as const;

const ALLOW = 'GET, HEAD';
const HOST_PATTERN = /^(?:[A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/;

/**
 * Scalar configuration for /docs. It is data (no functions), embedded in the page as JSON and
 * handed to `Scalar.createApiReference` by /docs/assets/init.js, so no inline script is needed.
 * Every option that would reach a Scalar-hosted service or a font CDN is off.
 */
export const SCALAR_CONFIGURATION = {
  url: DOCS_PATHS.json,
  // The bundled theme would load Inter and JetBrains Mono from fonts.scalar.com.
  withDefaultFonts: false,
  telemetry: false,
  // "Ask AI", the MCP button and the developer toolbar (register/share) all call scalar.com.
  agent: { disabled: true },
  mcp: { disabled: true },
  showDeveloperTools: 'never',
  // No proxyUrl: "Try it" requests go straight from the browser to this service (same origin).
  // The "Open API Client" button would open client.scalar.com; "Test Request" stays in the page.
  hideClientButton: true,
  hideTestRequestButton: false,
  // The token stays in memory only; a shared browser should not keep a bearer token around.
  persistAuth: false,
  authentication: { preferredSecurityScheme: 'bearerAuth' },
  documentDownloadType: 'both',
  defaultOpenAllTags: true,
  operationTitleSource: 'summary',
  theme: 'default',
  metaData: { title: 'tenant-service API reference' },
} as const;

/** Finds Scalar's standalone browser bundle in whichever node_modules holds the package. */
export function scalarBundlePath(): string {
  const relative = path.join('@scalar', 'api-reference', 'dist', 'browser', 'standalone.js');
  for (const dir of require.resolve.paths('@scalar/api-reference') ?? []) {
    const candidate = path.join(dir, relative);
    if (fs.existsSync(candidate)) return candidate;
  }
  throw new Error('@scalar/api-reference is not installed: its browser bundle (dist/browser/standalone.js) was not found');
}

function scalarVersion(bundle: string): string {
  const pkg = JSON.parse(fs.readFileSync(path.join(path.dirname(bundle), '..', '..', 'package.json'), 'utf8')) as { version?: string };
  return pkg.version ?? 'unknown';
}

const INIT_SCRIPT = `// Starts the API reference with the configuration /docs embeds as JSON.
(function () {
  var source = document.getElementById('scalar-configuration');
  var configuration = JSON.parse(source.textContent);
  window.Scalar.createApiReference('#api-reference-root', configuration);
})();
`;

function renderPage(bundleUrl: string): string {
  // `<` is escaped so no value can close the JSON script element.
  const json = JSON.stringify(SCALAR_CONFIGURATION).replace(/</g, '\\u003c');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>tenant-service API reference</title>
<link rel="icon" href="data:,">
</head>
<body>
<noscript>The API reference needs JavaScript. The contract itself is at <a href="${DOCS_PATHS.yaml}">${DOCS_PATHS.yaml}</a> and <a href="${DOCS_PATHS.json}">${DOCS_PATHS.json}</a>.</noscript>
<div id="api-reference-root"></div>
<script id="scalar-configuration" type="application/json">${json}</script>
<script src="${bundleUrl}"></script>
<script src="${DOCS_PATHS.init}"></script>
</body>
</html>
`;
}

/**
 * The base URL of this instance as the caller reached it. Express derives protocol and host
 * from X-Forwarded-Proto / X-Forwarded-Host only when `trust proxy` is on (config.trustProxy);
 * otherwise from the connection and the Host header. A Host that is not a plain host[:port]
 * falls back to the configured listen address rather than being echoed into the document.
 */
export function instanceUrl(req: Request, config: Config): string {
  const protocol = req.protocol === 'https' ? 'https' : 'http';
  const host = req.host;
  if (host && HOST_PATTERN.test(host)) return `${protocol}://${host}`;
  const fallbackHost = config.host.includes(':') ? `[${config.host}]` : config.host;
  return `${protocol}://${fallbackHost}:${config.port}`;
}

/** The contract with `servers` pointing at the instance that served it. */
export function servedDocument(req: Request, config: Config): Record<string, unknown> {
  const doc = loadOpenApiDocument();
  doc.servers = [{ url: instanceUrl(req, config), description: 'This instance' }];
  return doc;
}

function methodNotAllowed(req: Request, _res: Response, next: NextFunction): void {
  next(new ApiError('methodNotAllowed', `${req.method} is not allowed on ${req.path}.`, {}, { Allow: ALLOW }));
}

/**
 * The router for /openapi.json, /openapi.yaml, /docs and its assets. Mount it before the
 * bearer-token middleware and the openapi-backend catch-all. Throws at build time if the
 * Scalar bundle is missing, so a broken install fails at boot rather than on the first visit.
 */
export function createDocsRouter(config: Config): Router {
  const bundlePath = scalarBundlePath();
  const version = scalarVersion(bundlePath);
  const bundleUrl = `${DOCS_PATHS.bundle}?v=${encodeURIComponent(version)}`;
  let bundle: Asset | null = null;
  const init = asset(INIT_SCRIPT, 'text/javascript; charset=utf-8');
  const page = asset(renderPage(bundleUrl), 'text/html; charset=utf-8');

  const router = express.Router({ caseSensitive: true, strict: false });

  router.get(DOCS_PATHS.json, (req, res) => {
    res.setHeader('Cache-Control', 'no-cache');
    res.type('application/json; charset=utf-8').send(JSON.stringify(servedDocument(req, config), null, 2));
  });
  router.get(DOCS_PATHS.yaml, (req, res) => {
    res.setHeader('Cache-Control', 'no-cache');
    res.type('application/yaml; charset=utf-8').send(yaml.dump(servedDocument(req, config), { noRefs: true, lineWidth: -1 }));
  });

  router.get(DOCS_PATHS.page, pageCsp(), (req, res, next) => {
    sendAsset(req, res, page, 'no-cache').catch(next);
  });
  router.get(DOCS_PATHS.init, (req, res, next) => {
    sendAsset(req, res, init, 'no-cache').catch(next);
  });
  router.get(DOCS_PATHS.bundle, (req, res, next) => {
    // Read on first use: 4 MB that most API-only deployments never ask for.
    bundle ??= asset(fs.readFileSync(bundlePath), 'text/javascript; charset=utf-8');
    // The page links the bundle with ?v=<Scalar version>, so that URL never changes content.
    const cache = req.query.v === version ? 'public, max-age=31536000, immutable' : 'no-cache';
    sendAsset(req, res, bundle, cache).catch(next);
  });

  for (const p of Object.values(DOCS_PATHS)) router.all(p, methodNotAllowed);
  return router;
}

/** Stage: hands only /docs… and /openapi.* to the docs router, so API requests skip its routes. */
export function docsStage(router: Router): RequestHandler {
  return (req, res, next) => {
    const p = req.path;
    if (p.startsWith('/docs') || p.startsWith('/openapi.')) return router(req, res, next);
    next();
  };
}
