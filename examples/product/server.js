// A small product API behind tenant-service (docs/gateways.md), in two ways:
//
//   PRODUCT_AUTH=gateway  (default) nginx, Caddy, Traefik or Envoy asked tenant-service's
//                         GET /api/tenant/decision and injected X-Tenant-Id, X-Tenant-Slug,
//                         X-Tenant-Role, X-Tenant-Permissions, X-User-Id, X-User-Subject and
//                         X-User-Issuer. The product trusts them,
//                         so it must be reachable ONLY through the gateway (bind it to
//                         127.0.0.1 or a private network), and the gateway must strip the
//                         clients' copies of these headers (every config in examples/ does).
//   PRODUCT_AUTH=token    no gateway: the client sends a tenant token from
//                         POST /api/tenant/token (Authorization: Bearer … or X-Tenant-Token),
//                         verified here against tenant-service's /.well-known/jwks.json
//                         without a call back. A member removed from the tenant keeps access
//                         until the token expires (SERVICE_TENANT_TOKEN_TTL, 300 s by default).
//
// Run:  PORT=3000 TENANT_SERVICE_URL=http://127.0.0.1:8080 node examples/product/server.js
//
// Other settings: HOST (127.0.0.1), TENANT_TOKEN_ISSUER (SERVICE_TENANT_TOKEN_ISSUER; default
// TENANT_SERVICE_URL), TENANT_TOKEN_AUDIENCE (tenant-service-products), TENANT_SERVICE_JWKS_URL
// (default TENANT_SERVICE_URL + /.well-known/jwks.json), JWKS_CACHE_MAX_AGE_MS (how long the key
// set is kept before it is fetched again; jose's default, 10 minutes, is shorter than the
// 15 minutes a rotated key is published before it signs).
'use strict';

const express = require('express');
const { createRemoteJWKSet, jwtVerify } = require('jose');

/** The request's tenant and user from the gateway's headers, or null when a header is missing. */
function fromGatewayHeaders(req) {
  const tenantId = req.get('X-Tenant-Id');
  const userId = req.get('X-User-Id');
  const role = req.get('X-Tenant-Role');
  if (!tenantId || !userId || !role) return null;
  const subject = req.get('X-User-Subject');
  const issuer = req.get('X-User-Issuer');
  return {
    tenantId,
    tenantSlug: req.get('X-Tenant-Slug') ?? null,
    role,
    // Space-separated and sorted; empty when the role holds none (docs/roles.md).
    permissions: (req.get('X-Tenant-Permissions') ?? '').split(' ').filter(Boolean),
    userId,
    // Percent-encoded by tenant-service when not plain ASCII; decoding plain ASCII changes nothing.
    subject: subject ? decodeURIComponent(subject) : null,
    // The same name as a tenant token's `idp_iss`: a subject is unique per issuer only.
    idpIssuer: issuer ? decodeURIComponent(issuer) : null,
    via: 'gateway',
  };
}

/** The tenant token of a request: X-Tenant-Token, else Authorization: Bearer. */
function tenantTokenOf(req) {
  const header = req.get('X-Tenant-Token');
  if (header) return header;
  const m = /^Bearer\s+(\S+)$/i.exec(req.get('Authorization') ?? '');
  return m ? m[1] : null;
}

/** A verifier of tenant tokens: ES256 against the service's key set, iss, aud, typ at+jwt, exp. */
function tenantTokenVerifier({ jwksUrl, issuer, audience, cacheMaxAge }) {
  // Fetched once, cached, and fetched again when a token names an unknown kid (a rotation).
  const keys = createRemoteJWKSet(new URL(jwksUrl), cacheMaxAge ? { cacheMaxAge } : {});
  return async (token) => {
    const { payload } = await jwtVerify(token, keys, { issuer, audience, algorithms: ['ES256'], typ: 'at+jwt', requiredClaims: ['exp', 'sub'] });
    const { tenant_id: tenantId, tenant_slug: tenantSlug, tenant_role: role, user_id: userId } = payload;
    if (typeof tenantId !== 'string' || typeof userId !== 'string' || typeof role !== 'string') throw new Error('not a tenant token');
    // The role's permissions when the token was issued (absent from older tokens: none).
    const permissions = Array.isArray(payload.permissions) ? payload.permissions.filter((p) => typeof p === 'string') : [];
    return { tenantId, tenantSlug: tenantSlug ?? null, role, permissions, userId, subject: payload.sub, idpIssuer: payload.idp_iss ?? null, via: 'tenant-token' };
  };
}

/** Builds the product app. `mode`: 'gateway' or 'token'; `log(line)` is called for every request. */
function createProduct(options) {
  const { mode = 'gateway', log = () => undefined } = options;
  const verify = mode === 'token' ? tenantTokenVerifier(options) : null;
  const app = express();
  app.disable('x-powered-by');

  // Who is asking, for every route: no request reaches a handler without a tenant.
  app.use(async (req, res, next) => {
    log({
      method: req.method,
      path: req.path,
      x_tenant_id: req.get('X-Tenant-Id') ?? null,
      x_tenant_slug: req.get('X-Tenant-Slug') ?? null,
      x_tenant_role: req.get('X-Tenant-Role') ?? null,
      x_tenant_permissions: req.get('X-Tenant-Permissions') ?? null,
      x_user_id: req.get('X-User-Id') ?? null,
      x_user_subject: req.get('X-User-Subject') ?? null,
      x_user_issuer: req.get('X-User-Issuer') ?? null,
      x_tenant_error: req.get('X-Tenant-Error') ?? null,
      x_tenant_token: req.get('X-Tenant-Token') ? 'present' : null,
      // Behind a gateway the client's token stops there: the example configs drop it.
      authorization: req.get('Authorization') ? 'present' : null,
    });
    if (verify) {
      const token = tenantTokenOf(req);
      if (!token) return res.status(401).json({ error: 'A tenant token is required.' });
      try {
        req.tenant = await verify(token);
      } catch {
        return res.status(401).json({ error: 'The tenant token is not valid.' });
      }
    } else {
      req.tenant = fromGatewayHeaders(req);
      // Reached without the gateway's headers: the gateway is misconfigured or bypassed.
      if (!req.tenant) return res.status(401).json({ error: 'No tenant decision on this request.' });
    }
    next();
  });

  app.get('/whoami', (req, res) => {
    res.json(req.tenant);
  });

  // Everything the product does is scoped to req.tenant.tenantId; writes can demand a role.
  app.post('/projects', express.json(), (req, res) => {
    if (req.tenant.role !== 'admin') return res.status(403).json({ error: 'Only tenant admins create projects.' });
    res.status(201).json({ tenant_id: req.tenant.tenantId, name: String(req.body?.name ?? 'untitled'), created_by: req.tenant.userId });
  });

  // Every member reads the tenant's invoices; creating one needs a permission, which the
  // gateway's decision for a write on /invoices already asked for (the per-method pattern of
  // examples/nginx.conf, examples/Caddyfile, examples/traefik.yml); a tenant token carries the
  // role's permissions.
  app.get('/invoices', (req, res) => {
    res.json({ tenant_id: req.tenant.tenantId, invoices: [] });
  });

  app.post('/invoices', express.json(), (req, res) => {
    if (!req.tenant.permissions.includes('invoices:write')) return res.status(403).json({ error: 'Creating invoices needs the invoices:write permission.' });
    res.status(201).json({ tenant_id: req.tenant.tenantId, amount: Number(req.body?.amount ?? 0), created_by: req.tenant.userId });
  });

  return app;
}

module.exports = { createProduct, fromGatewayHeaders, tenantTokenOf, tenantTokenVerifier };

if (require.main === module) {
  const serviceUrl = (process.env.TENANT_SERVICE_URL ?? 'http://127.0.0.1:8080').replace(/\/$/, '');
  const app = createProduct({
    mode: process.env.PRODUCT_AUTH === 'token' ? 'token' : 'gateway',
    jwksUrl: process.env.TENANT_SERVICE_JWKS_URL ?? `${serviceUrl}/.well-known/jwks.json`,
    issuer: process.env.TENANT_TOKEN_ISSUER ?? serviceUrl,
    audience: process.env.TENANT_TOKEN_AUDIENCE ?? 'tenant-service-products',
    cacheMaxAge: process.env.JWKS_CACHE_MAX_AGE_MS ? Number(process.env.JWKS_CACHE_MAX_AGE_MS) : undefined,
    log: (line) => process.stdout.write(`${JSON.stringify({ msg: 'request', ...line })}\n`),
  });
  const server = app.listen(Number(process.env.PORT ?? 3000), process.env.HOST ?? '127.0.0.1', () => {
    process.stdout.write(`${JSON.stringify({ msg: 'listening', port: server.address().port })}\n`);
  });
  process.on('SIGTERM', () => server.close(() => process.exit(0)));
}
