/**
 * The gateway decision's refusals and its count are declared by operationId (src/http/decision.ts):
 * that operation exists in openapi.yaml, and its refusals keep to the statuses gateways pass on.
 */
import { readContractOperations } from '../../src/http/contract';
import { DECISION_OPERATION, decisionRefusal, isGatewayDecision } from '../../src/http/decision';
import { ApiError } from '../../src/errors';

it('names an operation of the contract, and only that one is the gateway decision', () => {
  const operations = readContractOperations();
  expect(operations.filter(isGatewayDecision).map((o) => o.operationId)).toEqual([DECISION_OPERATION]);
  expect(isGatewayDecision(null)).toBe(false);
});

it('answers 401, 429 and 5xx as they are and every other refusal 403, with X-Tenant-Error', () => {
  const cases: Array<[ApiError, number]> = [
    [new ApiError('unauthorized', 'no token'), 401],
    [new ApiError('rateLimited', 'slow down', {}, { 'Retry-After': '3' }), 429],
    [new ApiError('unavailable', 'down'), 503],
    [new ApiError('invalidTenantHeader', 'bad', { provided_tenant: 'Bad_Slug' }), 403],
    [new ApiError('methodNotAllowed', 'OPTIONS'), 403],
    [new ApiError('tenantNotFound', 'none'), 403],
  ];
  for (const [e, status] of cases) {
    const r = decisionRefusal(e);
    expect({ status: r.status, error: r.error, header: r.headers['X-Tenant-Error'], body: r.toBody('id') }).toEqual({
      status,
      error: e.error,
      header: e.error,
      body: e.toBody('id'),
    });
    expect(r.headers).toMatchObject(e.headers);
  }
});
