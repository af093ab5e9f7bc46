/**
 * createApp(config, services): the express pipeline, nothing else.
 *
 * helmet → request id and child logger → X-Tenant format → JSON body (1 MiB) → /docs and
 * /openapi.{json,yaml} (src/http/docs.ts, answered here) → bearer token (under /api) →
 * operation match → rate limit of that operation → openapi-backend validation
 * → handler (tenant-scoped ones inside their tenant's transaction) → typed response.
 * Every failure on the way is an ApiError that the error middleware turns into the Error body.
 */
import crypto from 'node:crypto';
import express, { type NextFunction, type Request, type Response } from 'express';
import helmet from 'helmet';
import OpenAPIBackend, { type Context as OpenApiContext, type Document, type Request as OpenApiRequest } from 'openapi-backend';
import addFormats from 'ajv-formats';
import { createAuthenticator } from './auth/verify';
import type { Config } from './config';
import { loadOpenApiDocument } from './openapi-document';
import type { AuthenticatedContext, RequestContext } from './http/context';
import { ApiError, mapDatabaseError } from './http/errors';
import { createDocsRouter } from './http/docs';
import type { AppServices } from './http/services';
import { handlers } from './handlers';
import type { Handler, HandlerInput } from './handlers/types';
import { enterTenant } from './tenancy/enter';
import { isValidTenantHeader } from './tenancy/resolve';

export const BODY_LIMIT = '1mb';
const MAX_JSON_DEPTH = 32;

interface Locals {
  requestId: string;
  ctx: RequestContext;
  operationId?: string;
  operationPath?: string;
}

/** Builds the express app. `services` carries the pool, logger, keys and rate limiter. */
export async function createApp(config: Config, services: AppServices): Promise<express.Express> {
  const api = new OpenAPIBackend({
    definition: loadOpenApiDocument() as unknown as Document,
    strict: true,
    validate: true,
    coerceTypes: true,
    ignoreTrailingSlashes: false,
    customizeAjv: (ajv) => {
      addFormats(ajv);
      return ajv;
    },
  });

  for (const [operationId, handler] of Object.entries(handlers) as Array<[string, Handler]>) {
    api.register(operationId, (c: OpenApiContext, req: Request, res: Response) => dispatch(handler, c, req, res));
  }
  api.register({
    validationFail: (c: OpenApiContext) => {
      throw new ApiError('validation', describeValidationErrors(c));
    },
    notFound: (c: OpenApiContext) => {
      throw new ApiError('notFound', `No endpoint ${c.request.method.toUpperCase()} ${c.request.path}.`);
    },
    methodNotAllowed: (c: OpenApiContext) => {
      throw new ApiError('methodNotAllowed', `${c.request.method.toUpperCase()} is not allowed on ${c.request.path}.`);
    },
    // Tokens are verified by express-jwt before routing; this only runs if that was skipped.
    unauthorizedHandler: () => {
      throw new ApiError('unauthorized', 'A valid bearer token is required.', {}, { 'WWW-Authenticate': 'Bearer realm="tenant-service"' });
    },
  });
  api.registerSecurityHandler('bearerAuth', (_c: OpenApiContext, _req: Request, res: Response) => Boolean(res.locals.ctx?.caller));
  await api.init();
  // openapi-backend rebuilds its flat list of operations (lodash chain, a spread per operation)
  // on every match, several times per request; the definition is fixed after init. Profiling
  // /healthz under load put that rebuild at ~15% of the process's busy time.
  const operations = api.router.getOperations();
  api.router.getOperations = () => operations;

  const authenticator = createAuthenticator(config, services.localKeys);
  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', config.trustProxy);
  app.set('etag', false);
  app.set('query parser', 'simple');

  app.use(helmet());

  // Request id and child logger; one access line per request.
  app.use((req: Request, res: Response, next: NextFunction) => {
    const incoming = req.headers['x-request-id'];
    const requestId = typeof incoming === 'string' && /^[A-Za-z0-9._-]{8,128}$/.test(incoming) ? incoming : crypto.randomUUID();
    const log = services.logger.child({ request_id: requestId });
    const started = process.hrtime.bigint();
    res.setHeader('X-Request-Id', requestId);
    const locals = res.locals as Locals;
    locals.requestId = requestId;
    locals.ctx = { requestId, log, caller: null, config, services };
    res.on('finish', () => {
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      const caller = locals.ctx.caller;
      log.info(
        {
          method: req.method,
          path: req.path,
          status: res.statusCode,
          duration_ms: Math.round(ms * 10) / 10,
          operation: locals.operationId,
          subject: caller?.subject,
          ip: req.ip,
        },
        'request completed',
      );
    });
    next();
  });

  // The X-Tenant header, when present on any endpoint, must be a well-formed slug.
  app.use((req: Request, _res: Response, next: NextFunction) => {
    const raw = req.headers['x-tenant'];
    if (raw === undefined) return next();
    const value = Array.isArray(raw) ? raw.join(', ') : raw;
    if (!isValidTenantHeader(value)) {
      return next(
        new ApiError(
          'invalidTenantHeader',
          'The X-Tenant header must be a tenant slug: only lowercase letters, numbers and hyphens, at most 255 characters.',
          { provided_tenant: value.slice(0, 1024) },
        ),
      );
    }
    next();
  });

  // JSON bodies only, at most 1 MiB.
  app.use((req: Request, _res: Response, next: NextFunction) => {
    const hasBody = req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0;
    if (hasBody && !req.is('application/json')) {
      return next(new ApiError('unsupportedMediaType', 'Request bodies must be JSON sent with Content-Type: application/json.'));
    }
    next();
  });
  app.use(express.json({ limit: BODY_LIMIT, strict: false, type: 'application/json' }));
  app.use((req: Request, _res: Response, next: NextFunction) => {
    // A body that is a JSON string would be JSON.parse'd again by openapi-backend, so a
    // double-encoded object ("{\"name\":…}") would pass as an object. Every body is an object.
    if (typeof req.body === 'string') {
      return next(new ApiError('validation', 'body must be a JSON object, not a JSON string.'));
    }
    if (req.body !== undefined && jsonDepthExceeds(req.body, MAX_JSON_DEPTH)) {
      return next(new ApiError('badRequest', `The JSON body is nested more than ${MAX_JSON_DEPTH} levels deep.`));
    }
    // PostgreSQL cannot store U+0000 in text or jsonb; refuse it here rather than fail in the database.
    if (req.body !== undefined && jsonContainsNul(req.body)) {
      return next(new ApiError('validation', 'body must not contain the NUL character (U+0000) in any key or string.'));
    }
    next();
  });

  // The contract and the API reference: public, outside /api, not rate-limited, not routed by openapi-backend.
  app.use(createDocsRouter(config));

  // Bearer token on every /api endpoint. A failure is held back until the request has been
  // counted (per client address, as it has no verified caller), so token guessing is rate limited.
  app.use('/api', (req: Request, res: Response, next: NextFunction) => {
    authenticator.middleware(req, res, (err?: unknown) => {
      if (err) res.locals.authError = err;
      else (res.locals as Locals).ctx = { ...(res.locals as Locals).ctx, caller: res.locals.caller };
      next();
    });
  });

  // Match the operation first, so the rate limit counts even requests that fail validation.
  app.use((req: Request, res: Response, next: NextFunction) => {
    const op = api.matchOperation(toOpenApiRequest(req));
    if (op) {
      const locals = res.locals as Locals;
      locals.operationId = op.operationId;
      locals.operationPath = op.path;
      res.locals.operation = { operationId: op.operationId, method: op.method.toUpperCase(), path: op.path };
    }
    next();
  });
  if (services.rateLimiter) app.use(services.rateLimiter.middleware);
  app.use((_req: Request, res: Response, next: NextFunction) => next(res.locals.authError));

  app.use(async (req: Request, res: Response, next: NextFunction) => {
    try {
      await api.handleRequest(toOpenApiRequest(req), req, res);
    } catch (err) {
      next(err);
    }
  });

  // The one error middleware.
  app.use((err: unknown, req: Request, res: Response, _next: NextFunction) => {
    const locals = res.locals as Partial<Locals>;
    const requestId = locals.requestId ?? crypto.randomUUID();
    const log = locals.ctx?.log ?? services.logger.child({ request_id: requestId });
    const apiError = toApiError(err);
    if (!apiError) {
      log.error({ err }, 'Unhandled error');
    } else if (apiError.status >= 500) {
      log.warn({ err, error: apiError.error }, 'Request failed');
    }
    const e = apiError ?? new ApiError('internal', `An unexpected error occurred; quote request id ${requestId} when reporting it.`);
    if (res.headersSent) {
      res.end();
      return;
    }
    res.status(e.status);
    for (const [k, v] of Object.entries(e.headers)) res.setHeader(k, v);
    if (e.kind === 'unauthorized' && !res.getHeader('WWW-Authenticate')) res.setHeader('WWW-Authenticate', 'Bearer realm="tenant-service"');
    res.json(e.toBody(requestId));
    void req;
  });

  return app;
}

/** Runs a handler: platform-admin check, tenant resolution, then the typed reply. */
async function dispatch(handler: Handler, c: OpenApiContext, req: Request, res: Response): Promise<void> {
  const ctx = (res.locals as Locals).ctx;
  const input: HandlerInput = {
    body: c.request.requestBody,
    path: (c.request.params ?? {}) as never,
    query: (c.request.query ?? {}) as never,
    headers: req.headers as Record<string, string | undefined>,
  };
  let reply;
  switch (handler.kind) {
    case 'public':
      reply = await handler.run(ctx, input);
      break;
    case 'authenticated':
      reply = await handler.run(requireCaller(ctx), input);
      break;
    case 'platformAdmin': {
      const actx = requireCaller(ctx);
      if (!actx.caller.isPlatformAdmin) {
        throw new ApiError('forbidden', `Only platform admins may call ${c.operation.method.toUpperCase()} ${c.operation.path}.`);
      }
      reply = await handler.run(actx, input);
      break;
    }
    case 'tenant': {
      const header = typeof req.headers['x-tenant'] === 'string' ? req.headers['x-tenant'] : null;
      reply = await enterTenant(requireCaller(ctx), header, (tctx) => handler.run(tctx, input));
      break;
    }
  }
  res.status(reply.status as number);
  for (const [k, v] of Object.entries(reply.headers ?? {})) res.setHeader(k, v);
  if (reply.status === 204 || reply.body === undefined) res.end();
  else res.json(reply.body);
}

function requireCaller(ctx: RequestContext): AuthenticatedContext {
  if (!ctx.caller) throw new ApiError('unauthorized', 'A valid bearer token is required.');
  return ctx as AuthenticatedContext;
}

function toApiError(err: unknown): ApiError | null {
  if (err instanceof ApiError) return err;
  const e = err as { type?: string; status?: number; statusCode?: number };
  if (e && typeof e === 'object' && typeof e.type === 'string') {
    // body-parser errors
    switch (e.type) {
      case 'entity.too.large':
        return new ApiError('payloadTooLarge', `The body is larger than ${BODY_LIMIT.replace('mb', ' MiB')}.`);
      case 'entity.parse.failed':
        return new ApiError('badRequest', 'The body is not valid JSON.');
      case 'encoding.unsupported':
      case 'charset.unsupported':
        return new ApiError('unsupportedMediaType', 'The body must be UTF-8 JSON.');
      case 'request.aborted':
      case 'request.size.invalid':
      case 'stream.encoding.set':
        return new ApiError('badRequest', 'The body could not be read.');
    }
  }
  return mapDatabaseError(err);
}

/** A plain request object for openapi-backend (it coerces query types in place). */
function toOpenApiRequest(req: Request): OpenApiRequest {
  return {
    method: req.method,
    path: req.path,
    query: { ...(req.query as Record<string, string | string[]>) },
    headers: req.headers as Record<string, string | string[]>,
    body: req.body,
  };
}

function describeValidationErrors(c: OpenApiContext): string {
  const errors = c.validation.errors ?? [];
  if (!errors.length) return 'The request does not match the API contract.';
  return errors
    .slice(0, 5)
    .map((e) => {
      const where = (e.instancePath || '')
        .replace(/^\/requestBody/, 'body')
        .replace(/^\/query/, 'query')
        .replace(/^\/params/, 'path')
        .replace(/^\/path/, 'path')
        .replace(/^\/headers/, 'header')
        .replace(/\//g, '.')
        .replace(/^\./, '');
      const params = e.params as Record<string, unknown>;
      let msg = e.message ?? 'is invalid';
      if (e.keyword === 'additionalProperties') msg = `has unknown field '${String(params.additionalProperty)}'`;
      if (e.keyword === 'required') msg = `is missing required field '${String(params.missingProperty)}'`;
      return `${where || 'request'} ${msg}`;
    })
    .join('; ');
}

function jsonContainsNul(value: unknown): boolean {
  const stack: unknown[] = [value];
  while (stack.length) {
    const v = stack.pop();
    if (typeof v === 'string') {
      if (v.includes('\u0000')) return true;
    } else if (v !== null && typeof v === 'object') {
      for (const [k, child] of Object.entries(v as Record<string, unknown>)) {
        if (k.includes('\u0000')) return true;
        stack.push(child);
      }
    }
  }
  return false;
}

function jsonDepthExceeds(value: unknown, max: number): boolean {
  const stack: Array<[unknown, number]> = [[value, 1]];
  while (stack.length) {
    const [v, d] = stack.pop()!;
    if (v === null || typeof v !== 'object') continue;
    if (d > max) return true;
    for (const child of Object.values(v as Record<string, unknown>)) {
      if (child !== null && typeof child === 'object') stack.push([child, d + 1]);
    }
  }
  return false;
}
