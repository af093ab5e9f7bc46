/**
 * The contract as loaded at run time: openapi.yaml from the package root, the same file the
 * generated client and the tests come from.
 */
import fs from 'node:fs';
import path from 'node:path';
import yaml from 'js-yaml';

let cached: { file: string; doc: Record<string, unknown> } | null = null;

/** Path of openapi.yaml (found upward from this module: src/ under ts-jest, dist/src/ compiled). */
export function openApiPath(): string {
  let dir = __dirname;
  for (let i = 0; i < 5; i++) {
    const candidate = path.join(dir, 'openapi.yaml');
    if (fs.existsSync(candidate)) return candidate;
    dir = path.dirname(dir);
  }
  throw new Error('openapi.yaml not found next to the package');
}

const ACCESS_TEXT: Record<string, string> = {
  public: 'public (no token)',
  caller: 'any caller with a valid token',
  platformAdmin: 'platform admins only',
  tenantMember: 'members of the resolved tenant (and platform admins)',
  tenantAdmin: 'members of the resolved tenant whose role holds the permission below (and platform admins)',
  tenantPlatformAdmin: 'platform admins only, in the resolved tenant (not its tenant admins)',
  scimToken: "a tenant's SCIM token (`scim_…`), which names the tenant (docs/directory-sync.md)",
};

/**
 * Appends each operation's `x-access`, `x-permission` and `x-rate-limit` to its description, so
 * the API reference (/docs, which renders descriptions) shows who may call it and how often.
 */
function describeExtensions(doc: Record<string, unknown>): void {
  for (const item of Object.values((doc.paths ?? {}) as Record<string, Record<string, Record<string, unknown>>>)) {
    for (const op of Object.values(item)) {
      if (!op || typeof op !== 'object' || typeof op.operationId !== 'string') continue;
      const access = ACCESS_TEXT[String(op['x-access'])];
      const limit = op['x-rate-limit'] as { counter?: string; limit?: number; window?: string; per?: string } | undefined;
      const notes = [
        access ? `**Access** (\`x-access: ${String(op['x-access'])}\`): ${access}.` : null,
        typeof op['x-permission'] === 'string' ? `**Permission** (\`x-permission\`): the caller's role holds \`${op['x-permission']}\` (docs/roles.md#system-permissions).` : null,
        limit
          ? `**Rate limit** (\`x-rate-limit\`): ${limit.limit} requests per ${limit.window} ${limit.per === 'address' ? 'per client address' : limit.per === 'scimToken' ? 'per SCIM token (per client address without a valid one)' : 'per caller (per client address without a valid token)'}, counter \`${limit.counter}\`.`
          : '**Rate limit**: none.',
      ].filter(Boolean);
      const description = typeof op.description === 'string' ? op.description.trimEnd() : '';
      op.description = `${description ? `${description}\n\n` : ''}${notes.join('\n\n')}\n`;
    }
  }
}

/**
 * A fresh copy of the parsed OpenAPI document (callers may mutate it), each operation's
 * description completed with its access level and rate limit.
 */
export function loadOpenApiDocument(): Record<string, unknown> {
  if (!cached) {
    const file = openApiPath();
    const doc = yaml.load(fs.readFileSync(file, 'utf8')) as Record<string, unknown>;
    describeExtensions(doc);
    cached = { file, doc };
  }
  return structuredClone(cached.doc);
}
