/**
 * openapi.yaml declares, per operation, its access level (`x-access`) and, for every /api
 * operation, its rate-limit counter (`x-rate-limit`); the server reads both (src/http/contract.ts)
 * and refuses to boot without them. The operation table is generated from the same file.
 */
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import fs from 'node:fs';
import yaml from 'js-yaml';
import { ACCESS_LEVELS, readContractOperations } from '../../src/http/contract';
import { openApiPath } from '../../src/openapi-document';

const raw = () => yaml.load(fs.readFileSync(openApiPath(), 'utf8')) as { paths: Record<string, Record<string, Record<string, unknown>>> };

describe('x-access and x-rate-limit', () => {
  it('every operation has x-access; every /api and SCIM operation has x-rate-limit; nothing else has one', () => {
    const doc = raw();
    const problems: string[] = [];
    for (const [p, item] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(item)) {
        if (typeof op !== 'object' || !op || !('operationId' in op)) continue;
        if (!ACCESS_LEVELS.includes(op['x-access'] as never)) problems.push(`${method} ${p}: x-access`);
        const limit = op['x-rate-limit'] as { counter?: unknown; limit?: unknown; window?: unknown } | undefined;
        // SCIM operations (x-access scimToken) live at /scim/v2 and count per token (docs/directory-sync.md).
        if (p.startsWith('/api/') || op['x-access'] === 'scimToken') {
          if (!limit || typeof limit.counter !== 'string' || typeof limit.limit !== 'number' || !['minute', 'hour'].includes(String(limit.window))) {
            problems.push(`${method} ${p}: x-rate-limit`);
          }
        } else if (limit !== undefined) {
          problems.push(`${method} ${p}: x-rate-limit outside /api`);
        }
      }
    }
    expect(problems).toEqual([]);
    expect(() => readContractOperations(raw() as never)).not.toThrow();
  });

  it('the server refuses a contract whose /api operation lacks either', () => {
    const noAccess = raw();
    delete noAccess.paths['/api/boards']!.get!['x-access'];
    expect(() => readContractOperations(noAccess as never)).toThrow(/GET \/api\/boards \(listBoards\) needs x-access/);
    const noLimit = raw();
    delete noLimit.paths['/api/tenant']!.get!['x-rate-limit'];
    expect(() => readContractOperations(noLimit as never)).toThrow(/GET \/api\/tenant \(getCurrentTenant\) needs x-rate-limit/);
    const twoLimits = raw();
    (twoLimits.paths['/api/boards']!.get!['x-rate-limit'] as { limit: number }).limit = 601;
    expect(() => readContractOperations(twoLimits as never)).toThrow(/counter 'api' has two limits/);
  });

  it('x-permission: required on tenantAdmin operations, a system permission, and on tenant operations only', () => {
    expect(readContractOperations(raw() as never).find((o) => o.operationId === 'listTenantEvents')?.permission).toBe('tenant:events:read');
    const none = raw();
    delete none.paths['/api/tenant/events']!.get!['x-permission'];
    expect(() => readContractOperations(none as never)).toThrow(/GET \/api\/tenant\/events \(listTenantEvents\) is tenantAdmin and needs x-permission/);
    const unknown = raw();
    unknown.paths['/api/tenant/events']!.get!['x-permission'] = 'tenant:events:readd';
    expect(() => readContractOperations(unknown as never)).toThrow(/x-permission must be a system permission/);
    const platform = raw();
    platform.paths['/api/setup/tenants']!.get!['x-permission'] = 'tenant:members:read';
    expect(() => readContractOperations(platform as never)).toThrow(/is platformAdmin; x-permission is for tenantAdmin and tenantMember operations only/);
  });

  it('x-forwarded-methods: the decision answers the methods gateways forward; a bad list stops the boot', () => {
    const ops = readContractOperations(raw() as never);
    const decision = ops.find((o) => o.operationId === 'decideTenantAccess')!;
    expect({ method: decision.method, forwarded: decision.forwardedMethods, takesBody: decision.takesBody }).toEqual({
      method: 'GET',
      forwarded: ['HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'],
      takesBody: false,
    });
    expect(ops.filter((o) => o.forwardedMethods.length > 0).map((o) => o.operationId)).toEqual(['decideTenantAccess']);
    // Routing of those methods through openapi-backend's router: test/api/tenant/decision.test.ts sends each.
    const lower = raw();
    lower.paths['/api/tenant/decision']!.get!['x-forwarded-methods'] = ['post'];
    expect(() => readContractOperations(lower as never)).toThrow(/x-forwarded-methods must list upper-case methods/);
    const withBody = raw();
    withBody.paths['/api/tenant/decision']!.get!.requestBody = { content: {} };
    expect(() => readContractOperations(withBody as never)).toThrow(/x-forwarded-methods .* without requestBody/);
  });

  it('src/handlers/operations.gen.ts is generated from openapi.yaml', () => {
    const root = path.resolve(__dirname, '..', '..');
    expect(() => execFileSync(process.execPath, [path.join(root, 'scripts/generate-operation-types.mjs'), '--check'], { cwd: root, stdio: 'pipe' })).not.toThrow();
  });
});
