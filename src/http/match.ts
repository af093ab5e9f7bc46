/**
 * Stage: the request matched once, case-sensitively, to an operation of the contract by
 * openapi-backend's router (./openapi.ts), with its path parameters decoded. A miss is not
 * answered yet: the request is counted first (any spelling of /api), then refused. A refusal
 * found before matching (`pendingRefusal`, ./tenant-header.ts) is raised here, once the
 * operation whose style answers it is known.
 */
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { Operation } from 'openapi-backend';
import { ApiError } from '../errors';
import { isApiPath, type ContractOperation } from './contract';
import type { ContractRouter } from './openapi';
import { stateOf } from './request-state';

type Miss = 'notFound' | 'methodNotAllowed';
interface Resolved {
  readonly route: Operation | Miss;
  readonly operation: ContractOperation | undefined;
}

/** The router's operation for `method path`, or why there is none (its 404/405 convention). */
function routeOf(router: ContractRouter, method: string, path: string): Operation | Miss {
  try {
    return router.matchOperation({ method, path, headers: {} }, true);
  } catch (err) {
    return err instanceof Error && err.message.startsWith('405') ? 'methodNotAllowed' : 'notFound';
  }
}

/**
 * The path parameters of `path` under `template`, decoded; null when the path is not the
 * template as written. The router is lenient there: it reads '//x' as '/x', and its template
 * patterns do not escape '.' (`/.well-known/jwksXjson` would match).
 */
function pathParams(template: string, path: string): Record<string, string> | ApiError | null {
  const names = template.split('/');
  const segments = path.split('/');
  if (names.length !== segments.length) return null;
  const params: Record<string, string> = {};
  for (let i = 0; i < names.length; i++) {
    const name = names[i]!;
    if (!name.startsWith('{')) {
      if (name !== segments[i]) return null;
      continue;
    }
    const key = name.slice(1, -1);
    try {
      params[key] = decodeURIComponent(segments[i]!);
    } catch {
      return new ApiError('badRequest', `The path parameter '${key}' is not valid percent-encoded UTF-8.`);
    }
  }
  return params;
}

/**
 * The base paths of the operations that answer SCIM errors (`x-error-format: scim`): the first two
 * segments of their templates (`/scim/v2`). A path under one that matches no operation is refused
 * in that format too: a directory reads every answer under its base URL as SCIM.
 */
export function scimBasePaths(operations: readonly ContractOperation[]): readonly string[] {
  return [...new Set(operations.filter((o) => o.errorFormat === 'scim').map((o) => o.path.split('/').slice(0, 3).join('/')))];
}

/**
 * The first operation declared at `path` under any method, and every method the operations there
 * answer (declared and forwarded), for a 405's `Allow` (looked up on a 405 only).
 */
function operationsAt(router: ContractRouter, byId: ReadonlyMap<string, ContractOperation>, methods: readonly string[], path: string): { operation: ContractOperation | null; allow: string[] } {
  let operation: ContractOperation | null = null;
  const allow = new Set<string>();
  for (const m of methods) {
    const route = routeOf(router, m, path);
    const op = typeof route === 'string' ? undefined : byId.get(route.operationId!);
    if (!op || pathParams(op.path, path) === null) continue;
    operation ??= op;
    allow.add(op.method);
    for (const f of op.forwardedMethods) allow.add(f);
  }
  return { operation, allow: [...allow].sort() };
}

/** The error format of a path's refusals made before any stage runs (./oversized-request.ts). */
export function errorFormatOfPath(operations: readonly ContractOperation[]): (path: string) => 'scim' | 'service' {
  const bases = scimBasePaths(operations);
  return (path) => (bases.some((b) => path === b || path.startsWith(`${b}/`)) ? 'scim' : 'service');
}

export function matchStage(router: ContractRouter, operations: readonly ContractOperation[]): RequestHandler {
  const byId = new Map(operations.map((o) => [o.operationId, o]));
  const scimBases = scimBasePaths(operations);
  const underScimBase = (path: string) => scimBases.some((b) => path === b || path.startsWith(`${b}/`));
  // Methods an operation answers besides its own (x-forwarded-methods: a gateway forwards the
  // product request's method to the decision endpoint): for each, the declared methods to try.
  const forwardedTo = new Map<string, string[]>();
  for (const o of operations) {
    for (const m of o.forwardedMethods) forwardedTo.set(m, [...new Set([...(forwardedTo.get(m) ?? []), o.method])]);
  }
  /**
   * The router's answers for paths that are an operation's template as written (no path
   * parameters): the router tries every template on each call, and for a forwarded method (a
   * gateway's HEAD on the decision) throws a 405 before the declared method is tried, a fifth of
   * a decision's CPU (docs/dependencies.md). At most one entry per method and parameterless
   * template, so the set cannot grow with what clients send; other paths are asked of the router
   * each time.
   */
  const remembered = new Map<string, Resolved>();
  const resolve = (method: string, path: string): Resolved => {
    const key = `${method} ${path}`;
    const known = remembered.get(key);
    if (known) return known;
    const found = resolveAnew(method, path);
    if (found.operation && found.operation.path === path && !path.includes('{')) remembered.set(key, found);
    return found;
  };
  /** The operation answering `method path`, directly or as one of its forwarded methods. */
  const resolveAnew = (method: string, path: string): Resolved => {
    const route = routeOf(router, method, path);
    if (typeof route !== 'string') return { route, operation: byId.get(route.operationId!) };
    for (const declared of forwardedTo.get(method) ?? []) {
      const viaDeclared = routeOf(router, declared, path);
      const op = typeof viaDeclared === 'string' ? undefined : byId.get(viaDeclared.operationId!);
      if (op?.forwardedMethods.includes(method)) return { route: viaDeclared, operation: op };
    }
    return { route, operation: undefined };
  };
  const methods = [...new Set(operations.map((o) => o.method))];
  const atPath = (path: string) => operationsAt(router, byId, methods, path);
  return (req: Request, _res: Response, next: NextFunction) => {
    const state = stateOf(req);
    const { route, operation } = resolve(req.method, req.path);
    const params = operation ? pathParams(operation.path, req.path) : null;
    if (!operation || params === null) {
      state.miss = typeof route === 'string' ? route : 'notFound';
      if (state.miss === 'methodNotAllowed') {
        const at = atPath(req.path);
        state.pathOperation = at.operation;
        state.allow = at.allow;
      }
      if (underScimBase(req.path)) state.missErrorFormat = 'scim';
    } else if (params instanceof ApiError) {
      state.operation = operation;
      state.deferredError = params;
    } else {
      state.operation = operation;
      state.params = params;
    }
    next(state.pendingRefusal ?? undefined);
  };
}

/**
 * Stage (after the rate limit): refuses what cannot go on. A request for a secured operation,
 * or for an unknown path under /api, without a valid token is 401; an unknown path is 404 and a
 * known path with another method 405 with `Allow`.
 */
export function gateStage(): RequestHandler {
  return (req: Request, _res: Response, next: NextFunction) => {
    const state = stateOf(req);
    const op = state.operation;
    if (state.authError && ((op && op.access !== 'public') || (!op && isApiPath(req.path)))) return next(state.authError);
    if (op) return next(state.deferredError ?? undefined);
    if (state.miss === 'methodNotAllowed') {
      // RFC 9110 (405 Method Not Allowed): the answer lists the methods the path answers.
      const allow = state.allow.join(', ');
      return next(new ApiError('methodNotAllowed', `${req.method} is not allowed on ${req.path}${allow ? `; it answers ${allow}` : ''}.`, {}, allow ? { Allow: allow } : {}));
    }
    return next(new ApiError('notFound', `No endpoint ${req.method} ${req.path}.`));
  };
}
