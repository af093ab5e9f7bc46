/**
 * Routing from the contract: a request's method and path matched once, case-sensitively, to an
 * operation of openapi.yaml, with its path parameters decoded.
 */
import { ApiError } from '../errors';
import type { ContractOperation } from './contract';

export type RouteMatch =
  | { readonly kind: 'operation'; readonly operation: ContractOperation; readonly params: Record<string, string> }
  /** The operation matched but a path parameter is not valid percent-encoded UTF-8 (a 400). */
  | { readonly kind: 'badParameter'; readonly operation: ContractOperation; readonly error: ApiError }
  | { readonly kind: 'methodNotAllowed' }
  | { readonly kind: 'notFound' };

interface CompiledRoute {
  readonly operation: ContractOperation;
  /** Per segment: the literal text, or null for a `{param}`. */
  readonly literals: ReadonlyArray<string | null>;
  readonly paramNames: ReadonlyArray<string | null>;
}

const NOT_FOUND: RouteMatch = Object.freeze({ kind: 'notFound' });
const METHOD_NOT_ALLOWED: RouteMatch = Object.freeze({ kind: 'methodNotAllowed' });

/** Matches requests to the contract's operations; built once at boot. */
export class Router {
  /** Routes by segment count, so a request is compared only with templates of its length. */
  private readonly bySegments = new Map<number, CompiledRoute[]>();

  constructor(operations: readonly ContractOperation[]) {
    for (const operation of operations) {
      const segments = operation.path.split('/');
      const literals = segments.map((s) => (s.startsWith('{') && s.endsWith('}') ? null : s));
      const paramNames = segments.map((s) => (s.startsWith('{') && s.endsWith('}') ? s.slice(1, -1) : null));
      const list = this.bySegments.get(segments.length) ?? [];
      list.push({ operation, literals, paramNames });
      this.bySegments.set(segments.length, list);
    }
  }

  /** The operation for `method path` (path without query string), or why there is none. */
  match(method: string, path: string): RouteMatch {
    const segments = path.split('/');
    const candidates = this.bySegments.get(segments.length);
    if (!candidates) return NOT_FOUND;
    let pathMatched = false;
    for (const route of candidates) {
      if (!sameShape(route, segments)) continue;
      pathMatched = true;
      if (route.operation.method !== method && !route.operation.forwardedMethods.includes(method)) continue;
      const params = decodeParams(route, segments);
      if (params instanceof ApiError) return { kind: 'badParameter', operation: route.operation, error: params };
      return { kind: 'operation', operation: route.operation, params };
    }
    return pathMatched ? METHOD_NOT_ALLOWED : NOT_FOUND;
  }
}

function sameShape(route: CompiledRoute, segments: string[]): boolean {
  for (let i = 0; i < segments.length; i++) {
    const literal = route.literals[i];
    if (literal === null) {
      if (segments[i] === '') return false;
    } else if (literal !== segments[i]) {
      return false;
    }
  }
  return true;
}

function decodeParams(route: CompiledRoute, segments: string[]): Record<string, string> | ApiError {
  const params: Record<string, string> = {};
  for (let i = 0; i < segments.length; i++) {
    const name = route.paramNames[i];
    if (name === null || name === undefined) continue;
    try {
      params[name] = decodeURIComponent(segments[i]!);
    } catch {
      return new ApiError('badRequest', `The path parameter '${name}' is not valid percent-encoded UTF-8.`);
    }
  }
  return params;
}
