/**
 * The operations of openapi.yaml as the server uses them: method, path template, access level
 * (`x-access`), the system permission a tenant operation needs (`x-permission`), rate-limit counter (`x-rate-limit`) and whether the operation takes a body.
 * Read once at boot; a contract that breaks the conventions (an /api operation without either
 * extension, an unknown access level, one counter declared with two limits) stops the boot.
 */
import { loadOpenApiDocument } from '../openapi-document';
import { isSystemPermission, SYSTEM_PERMISSIONS, type SystemPermission } from '../context/permissions';

export const ACCESS_LEVELS = ['public', 'caller', 'platformAdmin', 'tenantMember', 'tenantAdmin', 'tenantPlatformAdmin', 'scimToken'] as const;
export type AccessLevel = (typeof ACCESS_LEVELS)[number];

/** One rate-limit counter: every operation naming it shares its count per caller. */
export interface RateLimitCounter {
  readonly counter: string;
  readonly limit: number;
  readonly window: 'minute' | 'hour';
  /**
   * `caller` (default): per verified caller, per client address without one. `address`: per
   * client address always, for operations whose body is the credential (a caller's own token
   * must not buy a guesser a fresh count). `scimToken`: per SCIM token (per address without a
   * valid one), for the directory operations (docs/directory-sync.md).
   */
  readonly per: 'caller' | 'address' | 'scimToken';
}

export interface ContractOperation {
  readonly operationId: string;
  /** Upper case: GET, POST, … */
  readonly method: string;
  /** OpenAPI path template, e.g. `/api/setup/tenant/{tenant_id}`. */
  readonly path: string;
  readonly access: AccessLevel;
  /** Null for operations outside /api (probes, JWKS). */
  readonly rateLimit: RateLimitCounter | null;
  /** True when the operation declares a requestBody: only then is a body read. */
  readonly takesBody: boolean;
  /**
   * True when the requestBody is `application/x-ndjson` (a tenant import): the body stage leaves
   * it unread and the handler reads it as a stream, with its own size limit.
   */
  readonly streamedBody: boolean;
  /**
   * `x-forwarded-methods`: other methods answered as this operation (a gateway's decision
   * forwards the product request's method); their body is never read.
   */
  readonly forwardedMethods: readonly string[];
  /**
   * Query parameters declared as arrays (`?permission=a&permission=b`): one occurrence arrives
   * as a string and is read as a list of one before validation.
   */
  readonly arrayQueryParams: readonly string[];
  /**
   * `x-error-format`: `scim` answers every failure of the operation as a SCIM error
   * (src/http/scim-error.ts); `service` (default) as the service's Error body.
   */
  readonly errorFormat: 'service' | 'scim';
  /**
   * `x-gateway-auth: true`: the operation answers gateways' auth requests (docs/gateways.md): its
   * refusals keep to the statuses gateways pass on, its query is read up to `path=`, and its
   * answers are counted by outcome (src/http/decision.ts). A GET without requestBody.
   */
  readonly gatewayAuth: boolean;
  /** The JSON media types the requestBody declares (`application/json`, `application/scim+json`). */
  readonly bodyTypes: readonly string[];
  /**
   * `x-permission`: the system permission a member's role must hold to call a tenant operation
   * (docs/roles.md#system-permissions); null when any member may. Required on `tenantAdmin`
   * operations, allowed on `tenantMember` ones, on no other level.
   */
  readonly permission: SystemPermission | null;
}

/** The operation's `x-permission`, checked against its access level and the system permissions. */
function readPermission(where: string, access: AccessLevel, raw: unknown): SystemPermission | null {
  if (raw === undefined) {
    if (access === 'tenantAdmin') throw new Error(`openapi.yaml: ${where} is tenantAdmin and needs x-permission (${SYSTEM_PERMISSIONS.join(' | ')})`);
    return null;
  }
  if (access !== 'tenantAdmin' && access !== 'tenantMember') throw new Error(`openapi.yaml: ${where} is ${access}; x-permission is for tenantAdmin and tenantMember operations only`);
  if (typeof raw !== 'string' || !isSystemPermission(raw)) throw new Error(`openapi.yaml: ${where} x-permission must be a system permission (${SYSTEM_PERMISSIONS.join(' | ')})`);
  return raw;
}

/** The inline query parameters of an operation whose schema is an array. */
function readArrayQueryParams(op: OperationObject): readonly string[] {
  const params = Array.isArray(op.parameters) ? (op.parameters as Array<Record<string, unknown>>) : [];
  return Object.freeze(
    params.filter((p) => p.in === 'query' && typeof p.name === 'string' && (p.schema as { type?: unknown } | undefined)?.type === 'array').map((p) => p.name as string),
  );
}

/** The counter that also counts /api paths matching no operation (docs/operations.md#rate-limits). */
export const FALLBACK_COUNTER = 'api';

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace'];

type OperationObject = Record<string, unknown> & { operationId?: string; requestBody?: unknown };

/** True for any spelling of /api (`/API/tenant`, `/Api`): counted and authenticated even though it routes nowhere. */
export function reachesApi(path: string): boolean {
  return path.length >= 4 && path.slice(0, 4).toLowerCase() === '/api' && (path.length === 4 || path.charCodeAt(4) === 47);
}

/** True for `/api` and everything under it, in this exact spelling. */
export function isApiPath(path: string): boolean {
  return path.startsWith('/api') && (path.length === 4 || path.charCodeAt(4) === 47 /* / */);
}

function readRateLimit(where: string, raw: unknown): RateLimitCounter {
  const r = raw as Partial<RateLimitCounter> | undefined;
  if (!r || typeof r.counter !== 'string' || !Number.isInteger(r.limit) || (r.limit as number) < 1 || (r.window !== 'minute' && r.window !== 'hour')) {
    throw new Error(`openapi.yaml: ${where} needs x-rate-limit {counter, limit, window: minute|hour}`);
  }
  if (r.per !== undefined && r.per !== 'caller' && r.per !== 'address' && r.per !== 'scimToken') throw new Error(`openapi.yaml: ${where} x-rate-limit per must be caller, address or scimToken`);
  return Object.freeze({ counter: r.counter, limit: r.limit as number, window: r.window, per: r.per ?? 'caller' });
}

function readForwardedMethods(where: string, raw: unknown, takesBody: boolean): readonly string[] {
  if (raw === undefined) return Object.freeze([]);
  if (!Array.isArray(raw) || takesBody || !raw.every((m) => typeof m === 'string' && METHODS.includes(m.toLowerCase()) && m === m.toUpperCase())) {
    throw new Error(`openapi.yaml: ${where} x-forwarded-methods must list upper-case methods, on an operation without requestBody`);
  }
  return Object.freeze([...(raw as string[])]);
}

/** The media type that makes a request body streamed: declared per operation by its requestBody. */
export const STREAMED_BODY_TYPE = 'application/x-ndjson';

/** True when the requestBody takes `application/x-ndjson` alone; both kinds at once stop the boot. */
function readStreamedBody(where: string, requestBody: unknown): boolean {
  const content = (requestBody as { content?: Record<string, unknown> } | undefined)?.content;
  if (!content) return false;
  const types = Object.keys(content);
  if (!types.includes(STREAMED_BODY_TYPE)) return false;
  if (types.length > 1) throw new Error(`openapi.yaml: ${where} takes ${STREAMED_BODY_TYPE} and other media types; a streamed body must be the only one`);
  return true;
}

/** Reads every operation of a parsed OpenAPI document (default: openapi.yaml) and checks the conventions. */
export function readContractOperations(doc: Record<string, unknown> = loadOpenApiDocument()): readonly ContractOperation[] {
  const ops: ContractOperation[] = [];
  const counters = new Map<string, RateLimitCounter>();
  for (const [path, item] of Object.entries((doc.paths ?? {}) as Record<string, Record<string, OperationObject>>)) {
    for (const method of METHODS) {
      const op = item[method];
      if (!op) continue;
      const where = `${method.toUpperCase()} ${path} (${op.operationId ?? 'no operationId'})`;
      if (typeof op.operationId !== 'string') throw new Error(`openapi.yaml: ${where} has no operationId`);
      const access = op['x-access'];
      if (!ACCESS_LEVELS.includes(access as AccessLevel)) throw new Error(`openapi.yaml: ${where} needs x-access (${ACCESS_LEVELS.join(' | ')})`);
      let rateLimit: RateLimitCounter | null = null;
      // SCIM operations live at /scim/v2 (where directories expect them) and count per token.
      if (isApiPath(path) || access === 'scimToken') {
        rateLimit = readRateLimit(where, op['x-rate-limit']);
        const seen = counters.get(rateLimit.counter);
        if (seen && (seen.limit !== rateLimit.limit || seen.window !== rateLimit.window || seen.per !== rateLimit.per)) {
          throw new Error(`openapi.yaml: counter '${rateLimit.counter}' has two limits (${where})`);
        }
        counters.set(rateLimit.counter, rateLimit);
      } else if (op['x-rate-limit'] !== undefined) {
        throw new Error(`openapi.yaml: ${where} is outside /api and must not declare x-rate-limit`);
      }
      const forwardedMethods = readForwardedMethods(where, op['x-forwarded-methods'], op.requestBody !== undefined);
      const streamedBody = readStreamedBody(where, op.requestBody);
      const errorFormat = op['x-error-format'] ?? 'service';
      if (errorFormat !== 'service' && errorFormat !== 'scim') throw new Error(`openapi.yaml: ${where} x-error-format must be service or scim`);
      const gatewayAuth = op['x-gateway-auth'] ?? false;
      if (gatewayAuth !== true && gatewayAuth !== false) throw new Error(`openapi.yaml: ${where} x-gateway-auth must be true or absent`);
      if (gatewayAuth && (method !== 'get' || op.requestBody !== undefined)) throw new Error(`openapi.yaml: ${where} x-gateway-auth is for a GET without requestBody`);
      const content = (op.requestBody as { content?: Record<string, unknown> } | undefined)?.content ?? {};
      const bodyTypes = Object.freeze(Object.keys(content).filter((t) => t !== STREAMED_BODY_TYPE));
      ops.push(
        Object.freeze({
          operationId: op.operationId,
          method: method.toUpperCase(),
          path,
          access: access as AccessLevel,
          rateLimit,
          takesBody: op.requestBody !== undefined,
          streamedBody,
          forwardedMethods,
          arrayQueryParams: readArrayQueryParams(op),
          errorFormat,
          gatewayAuth,
          bodyTypes,
          permission: readPermission(where, access as AccessLevel, op['x-permission']),
        }),
      );
    }
  }
  if (!counters.has(FALLBACK_COUNTER)) throw new Error(`openapi.yaml: no operation uses the '${FALLBACK_COUNTER}' counter`);
  return Object.freeze(ops);
}

/** Every counter of the contract, once, with the operations that share it. */
export function rateLimitCounters(ops: readonly ContractOperation[]): ReadonlyMap<string, { rule: RateLimitCounter; operations: ContractOperation[] }> {
  const out = new Map<string, { rule: RateLimitCounter; operations: ContractOperation[] }>();
  for (const op of ops) {
    if (!op.rateLimit) continue;
    const entry = out.get(op.rateLimit.counter) ?? { rule: op.rateLimit, operations: [] };
    entry.operations.push(op);
    out.set(op.rateLimit.counter, entry);
  }
  return out;
}
