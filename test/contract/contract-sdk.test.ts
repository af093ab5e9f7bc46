/**
 * Third parties can build SDKs from openapi.yaml: a second, independent generator
 * (openapi-typescript, not the hey-api generator behind generated/) turns it into types, and a
 * strict TypeScript compile of a consumer that touches every operation must pass. Also checks
 * the operationId convention: unique, verb + noun camelCase, and each has a handler.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { handlers } from '../../src/handlers';
import { loadOpenApiDocument } from '../../src/openapi-document';

jest.setTimeout(120_000);

const ROOT = path.resolve(__dirname, '..', '..');
const run = promisify(execFile);
const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'] as const;

interface Operation {
  method: string;
  path: string;
  operationId: string;
}

function operations(): Operation[] {
  const doc = loadOpenApiDocument() as { paths: Record<string, Record<string, { operationId?: string }>> };
  const ops: Operation[] = [];
  for (const [p, item] of Object.entries(doc.paths)) {
    for (const m of METHODS) {
      const op = item[m];
      if (op) ops.push({ method: m, path: p, operationId: op.operationId ?? '' });
    }
  }
  return ops;
}

describe('operationIds', () => {
  const ops = operations();

  it('exist, are unique and are verb + noun camelCase', () => {
    expect(ops.length).toBeGreaterThan(0);
    const ids = ops.map((o) => o.operationId);
    expect(ids.filter((id) => !id)).toEqual([]);
    expect(ids.filter((id, i) => ids.indexOf(id) !== i)).toEqual([]);
    // A lowercase verb from the list, then at least one capitalised noun word. `replace`: a SCIM
    // PUT replaces the whole resource (its PATCH is the update).
    const verbs = ['get', 'list', 'create', 'update', 'replace', 'delete', 'register', 'audit', 'add', 'remove', 'resend', 'revoke', 'accept', 'leave', 'decide', 'issue', 'rotate', 'suspend', 'reactivate', 'schedule', 'cancel', 'export', 'import', 'search', 'claim', 'verify', 'mark', 'join'];
    for (const id of ids) {
      expect({ id, ok: /^[a-z]+(?:[A-Z][a-z0-9]+)+$/.test(id) && verbs.includes(/^[a-z]+/.exec(id)![0]) }).toEqual({ id, ok: true });
    }
  });

  it('each has exactly one handler, and no handler lacks an operation', () => {
    const ids = ops.map((o) => o.operationId).sort();
    expect(Object.keys(handlers).sort()).toEqual(ids);
    for (const id of ids) expect(typeof (handlers as Record<string, { run?: unknown }>)[id]?.run).toBe('function');
  });
});

describe('an independent SDK generator (openapi-typescript)', () => {
  let dir: string;
  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tenant-service-sdk-'));
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('generates types from openapi.yaml that a strict TypeScript consumer compiles against', async () => {
    const out = path.join(dir, 'schema.d.ts');
    await run(process.execPath, [path.join(ROOT, 'node_modules', 'openapi-typescript', 'bin', 'cli.js'), path.join(ROOT, 'openapi.yaml'), '-o', out], {
      cwd: ROOT,
    });
    const generated = fs.readFileSync(out, 'utf8');
    expect(generated).toMatch(/export interface paths/);
    expect(generated).toMatch(/export interface operations/);

    // A consumer touching every operation by path, method and operationId, plus typed usage
    // that must compile and misuse that must not (so the types are not `any`).
    const ops = operations();
    const lines = [
      "import type { components, operations, paths } from './schema';",
      '',
      ...ops.flatMap((o, i) => [
        `type Op${i} = paths['${o.path}']['${o.method}'];`,
        `type Responses${i} = Op${i}['responses'];`,
        `const sameOp${i}: operations['${o.operationId}'] = null as unknown as Op${i};`,
        `export const check${i}: [Responses${i}, typeof sameOp${i}] | null = null;`,
      ]),
      '',
      "type CreateTenantBody = NonNullable<operations['createTenant']['requestBody']>['content']['application/json'];",
      "export const body: CreateTenantBody = { name: 'Acme', slug: 'acme', settings: { billing_plan: 'pro' }, include_sample_data: true };",
      "type Tenant = components['schemas']['Tenant'];",
      'export function slugOf(t: Tenant): string { return t.slug; }',
      "type ErrorBody = components['schemas']['Error'];",
      "export const err: ErrorBody = { error: 'Conflict', detail: 'taken' };",
      '// @ts-expect-error a slug is a string, not a number',
      "export const bad: CreateTenantBody = { name: 'Acme', slug: 42 };",
      '// @ts-expect-error name is required',
      "export const missing: CreateTenantBody = { slug: 'acme' };",
      '',
    ];
    fs.writeFileSync(path.join(dir, 'consumer.ts'), lines.join('\n'));
    fs.writeFileSync(
      path.join(dir, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          strict: true,
          noEmit: true,
          target: 'ES2022',
          module: 'nodenext',
          moduleResolution: 'nodenext',
          noUncheckedIndexedAccess: true,
          exactOptionalPropertyTypes: true,
          noUnusedLocals: false,
          types: [],
          skipLibCheck: false,
        },
        files: ['schema.d.ts', 'consumer.ts'],
      }),
    );
    try {
      await run(process.execPath, [path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', path.join(dir, 'tsconfig.json')], { cwd: dir });
    } catch (e) {
      const err = e as { stdout?: string; stderr?: string };
      throw new Error(`tsc --noEmit (strict) failed on the openapi-typescript client:\n${err.stdout ?? ''}${err.stderr ?? ''}`);
    }
  });
});
