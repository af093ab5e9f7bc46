/**
 * How an operation declaring `x-gateway-auth: true` (the gateway decision) answers gateways' auth
 * requests (docs/gateways.md#what-it-answers). Gateways pass a 401 or 403 of the auth request on
 * to the client and treat any other status as their own failure (nginx answers 500, Envoy
 * denies), so every refusal except the token's (401), the rate limit (429) and the service's own
 * failures (5xx, fail closed) is answered 403, with the usual Error body and its `error` string in
 * X-Tenant-Error. The stages ask `answersGateway` of the matched operation: none names one.
 */
import { ApiError } from '../errors';
import type { ContractOperation } from './contract';

/**
 * True when `op` (the matched operation, or on a 405 the one at the path; never the path itself)
 * declares `x-gateway-auth`: the stages answer its refusals with `decisionRefusal`, read its query
 * with `decisionQuery` and count each answer by `decisionOutcome`.
 */
export function answersGateway(op: ContractOperation | null | undefined): boolean {
  return op?.gatewayAuth === true;
}

/** The status of a refusal of the decision: 401, 429 and 5xx as they are, every other 403. */
export function decisionStatus(status: number): number {
  return status === 401 || status === 429 || status >= 500 ? status : 403;
}

/** Refusals that keep their 400: a gateway's own configuration is wrong (a gateway then fails closed). */
const GATEWAY_MISTAKES = new WeakSet<ApiError>();

/** A refusal of the decision: the same error (body, headers) under its decision status, with X-Tenant-Error. */
export function decisionRefusal(e: ApiError): ApiError {
  const refusal = new ApiError(e.kind, e.detail, e.extras, { ...e.headers, 'X-Tenant-Error': e.error });
  (refusal as { status: number }).status = GATEWAY_MISTAKES.has(e) ? e.status : decisionStatus(e.status);
  return refusal;
}

/** The only query parameters the decision takes from the gateway (before `path=`). */
const DECISION_PARAMETERS = new Set(['permission', 'role']);

function decodeQueryPart(part: string): string {
  try {
    return decodeURIComponent(part.replace(/\+/g, ' '));
  } catch {
    throw gatewayMistake(`The decision's query has a malformed escape in '${part.slice(0, 100)}'.`);
  }
}

function gatewayMistake(detail: string): ApiError {
  const e = new ApiError('badRequest', detail);
  GATEWAY_MISTAKES.add(e);
  return e;
}

/**
 * The decision's query parameters, from the request's URL as sent (docs/gateways.md#what-it-reads):
 * `permission` (repeatable) and `role`, spelled exactly so; everything from a `path` parameter on
 * is the product request Envoy appends and is ignored. Any other parameter before it (a typo,
 * another spelling such as `Permission`, `permissions` or `permission[]`) is a 400 naming it, which
 * the decision answers as 400 (not 403): a gateway's mistake fails closed instead of checking less.
 */
export function decisionQuery(url: string): Record<string, string | string[]> {
  const q = url.indexOf('?');
  const query: Record<string, string | string[]> = {};
  if (q < 0) return query;
  for (const part of url.slice(q + 1).split('&')) {
    if (part === '') continue;
    const eq = part.indexOf('=');
    const name = decodeQueryPart(eq < 0 ? part : part.slice(0, eq));
    if (name === 'path') break;
    if (!DECISION_PARAMETERS.has(name)) {
      throw gatewayMistake(
        `The decision does not take the query parameter '${name.slice(0, 100)}': only 'permission' (repeatable) and 'role', before 'path=' (everything from 'path=' on is ignored).`,
      );
    }
    const value = eq < 0 ? '' : decodeQueryPart(part.slice(eq + 1));
    const held = query[name];
    if (name === 'permission') query[name] = [...((held as string[] | undefined) ?? []), value];
    else query[name] = held === undefined ? value : [...(Array.isArray(held) ? held : [held]), value];
  }
  return query;
}

export const DECISION_OUTCOMES = ['allowed', 'unauthorized', 'forbidden', 'rate_limited', 'unavailable', 'error'] as const;
export type DecisionOutcome = (typeof DECISION_OUTCOMES)[number];

/** The `outcome` label of tenant_service_tenant_decisions_total, from the answer's status. */
export function decisionOutcome(status: number): DecisionOutcome {
  if (status === 200) return 'allowed';
  if (status === 401) return 'unauthorized';
  if (status === 403) return 'forbidden';
  if (status === 429) return 'rate_limited';
  if (status === 503) return 'unavailable';
  return 'error';
}
