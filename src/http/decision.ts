/**
 * The gateway decision's answers (docs/gateways.md#what-it-answers). Gateways pass a 401 or 403 of
 * the auth request on to the client and treat any other status as their own failure (nginx answers
 * 500, Envoy denies), so every refusal except the token's (401), the rate limit (429) and the
 * service's own failures (5xx, fail closed) is answered 403, with the usual Error body and its
 * `error` string in X-Tenant-Error.
 */
import { ApiError } from '../errors';
import type { ContractOperation } from './contract';

/**
 * The operation answered to gateways' auth requests: the generic stages answer its refusals with
 * `decisionRefusal` and count each answer by `decisionOutcome`, by this operationId (the matched
 * operation, or on a 405 the one at the path; never the path itself).
 */
export const DECISION_OPERATION = 'decideTenantAccess';

/** True when `op` is the gateway decision. */
export function isGatewayDecision(op: ContractOperation | null): boolean {
  return op?.operationId === DECISION_OPERATION;
}

/** Printable ASCII other than `%`: sent as is (decodeURIComponent leaves it unchanged). */
const PLAIN_HEADER_VALUE = /^[\x20-\x24\x26-\x7e]*$/;

/** The subject as a header value: percent-encoded (UTF-8) unless it is plain ASCII. */
export function subjectHeaderValue(subject: string): string {
  return PLAIN_HEADER_VALUE.test(subject) ? subject : encodeURIComponent(subject);
}

/** The status of a refusal of the decision: 401, 429 and 5xx as they are, every other 403. */
export function decisionStatus(status: number): number {
  return status === 401 || status === 429 || status >= 500 ? status : 403;
}

/** A refusal of the decision: the same error (body, headers) under its decision status, with X-Tenant-Error. */
export function decisionRefusal(e: ApiError): ApiError {
  const refusal = new ApiError(e.kind, e.detail, e.extras, { ...e.headers, 'X-Tenant-Error': e.error });
  (refusal as { status: number }).status = decisionStatus(e.status);
  return refusal;
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
