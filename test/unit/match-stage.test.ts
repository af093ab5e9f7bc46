/**
 * src/http/match.ts: the router's answer for a parameterless operation path is remembered (the
 * router rebuilds nothing but still tries every template and throws for a forwarded method), and
 * only for such paths, so what clients send cannot grow the memory; parameterized paths are
 * matched anew, with their own parameters, every time.
 */
import type { NextFunction, Request, Response } from 'express';
import pino from 'pino';
import type { AppServices } from '../../src/context/app-services';
import { readContractOperations } from '../../src/http/contract';
import { matchStage } from '../../src/http/match';
import { createContractApi, type ContractRouter } from '../../src/http/openapi';
import { attachState, RequestState, stateOf } from '../../src/http/request-state';

const services = { logger: pino({ level: 'silent' }) } as unknown as AppServices;

let router: ContractRouter;
let stage: (req: Request, res: Response, next: NextFunction) => void;
let asked: jest.SpyInstance;

beforeAll(async () => {
  router = (await createContractApi()).router;
  asked = jest.spyOn(router, 'matchOperation');
  stage = matchStage(router, readContractOperations()) as typeof stage;
});

function match(method: string, path: string): RequestState {
  const req = { method, path, headers: {} } as unknown as Request;
  attachState(req, new RequestState('r', services.logger, services, 0n));
  stage(req, {} as Response, () => undefined);
  return stateOf(req);
}

beforeEach(() => asked.mockClear());

it('answers a forwarded HEAD on the decision as the decision, asking the router only the first time', () => {
  const first = match('HEAD', '/api/tenant/decision');
  expect(first.operation?.operationId).toBe('decideTenantAccess');
  const calls = asked.mock.calls.length;
  expect(calls).toBeGreaterThan(0);
  for (let i = 0; i < 5; i++) expect(match('HEAD', '/api/tenant/decision').operation?.operationId).toBe('decideTenantAccess');
  expect(match('GET', '/api/tenant/decision').operation?.operationId).toBe('decideTenantAccess');
  const afterGet = asked.mock.calls.length;
  expect(match('GET', '/api/tenant/decision').operation?.operationId).toBe('decideTenantAccess');
  expect(asked.mock.calls.length).toBe(afterGet); // remembered
  expect(afterGet).toBeLessThanOrEqual(calls + 1); // the HEADs after the first asked nothing
});

it('matches parameterized paths anew, each with its own parameters', () => {
  const a = '11111111-1111-4111-8111-111111111111';
  const b = '22222222-2222-4222-8222-222222222222';
  expect(match('GET', `/api/setup/tenant/${a}`).params).toEqual({ tenant_id: a });
  expect(match('GET', `/api/setup/tenant/${b}`).params).toEqual({ tenant_id: b });
  const before = asked.mock.calls.length;
  expect(match('GET', `/api/setup/tenant/${a}`).params).toEqual({ tenant_id: a });
  expect(asked.mock.calls.length).toBeGreaterThan(before);
});

it('remembers no miss: an unknown path or a wrong method is asked of the router each time', () => {
  for (let i = 0; i < 3; i++) {
    const before = asked.mock.calls.length;
    expect(match('GET', `/api/nothing-${i}`).miss).toBe('notFound');
    expect(match('OPTIONS', '/api/tenant/decision').miss).toBe('methodNotAllowed');
    expect(asked.mock.calls.length).toBeGreaterThan(before);
  }
  // The template as written, sent literally, is not a parameterless path either.
  expect(match('GET', '/api/setup/tenant/{tenant_id}').params).toEqual({ tenant_id: '{tenant_id}' });
});
