/**
 * The gateway decision's refusals, query and count are declared in openapi.yaml
 * (`x-gateway-auth: true`, read by src/http/contract.ts; the stages ask src/http/decision.ts's
 * `answersGateway`): exactly the decision declares it, only on a GET without a body, and its
 * refusals keep to the statuses gateways pass on.
 */
import fs from 'node:fs';
import yaml from 'js-yaml';
import { readContractOperations } from '../../src/http/contract';
import { answersGateway, decisionRefusal } from '../../src/http/decision';
import { ApiError } from '../../src/errors';
import { openApiPath } from '../../src/openapi-document';

it('the decision alone declares x-gateway-auth, and no stage names an operation', () => {
  const operations = readContractOperations();
  expect(operations.filter(answersGateway).map((o) => o.operationId)).toEqual(['decideTenantAccess']);
  expect(answersGateway(null)).toBe(false);
  for (const stage of fs.readdirSync('src/http')) expect([stage, fs.readFileSync(`src/http/${stage}`, 'utf8').includes('decideTenantAccess')]).toEqual([stage, false]);
});

it('x-gateway-auth is true or absent, on a GET without requestBody', () => {
  type Doc = { paths: Record<string, Record<string, Record<string, unknown>>> };
  const raw = () => yaml.load(fs.readFileSync(openApiPath(), 'utf8')) as Doc;
  const notTrue = raw();
  notTrue.paths['/api/tenant/decision']!.get!['x-gateway-auth'] = 'yes';
  expect(() => readContractOperations(notTrue as never)).toThrow(/x-gateway-auth must be true or absent/);
  const post = raw();
  post.paths['/api/tenant/members']!.post!['x-gateway-auth'] = true;
  expect(() => readContractOperations(post as never)).toThrow(/x-gateway-auth is for a GET without requestBody/);
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
