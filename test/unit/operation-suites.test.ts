/**
 * Tests by area (docs/architecture.md#tests): every operation of openapi.yaml has a suite in
 * test/api/<its tag>/ that names it (its operationId) or requests its path, so a reader finds an
 * operation's tests beside its tag's handler, and an operation added without tests fails here.
 */
import fs from 'node:fs';
import path from 'node:path';
import yaml from 'js-yaml';

const ROOT = path.resolve(__dirname, '..', '..');
const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'];

interface Operation {
  operationId: string;
  tag: string;
  path: string;
}

function operations(): Operation[] {
  const doc = yaml.load(fs.readFileSync(path.join(ROOT, 'openapi.yaml'), 'utf8')) as { paths: Record<string, Record<string, { operationId?: string; tags?: string[] }>> };
  const out: Operation[] = [];
  for (const [p, item] of Object.entries(doc.paths)) {
    for (const m of METHODS) {
      const op = item[m];
      if (op?.operationId) out.push({ operationId: op.operationId, tag: op.tags?.[0] ?? '(untagged)', path: p });
    }
  }
  return out;
}

/** The path as a test writes it: each `{param}` is any value, a `${…}` template or a literal. */
function pathPattern(p: string): RegExp {
  const parts = p.split(/\{[^}]+\}/).map((s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  return new RegExp(`${parts.join('(?:\\$\\{[^}]+\\}|[^\\s\'"`/?]+)')}(?=[\\s'"\`?]|$)`);
}

function suites(tag: string): string[] {
  const dir = path.join(ROOT, 'test', 'api', tag);
  if (!fs.existsSync(dir)) return [];
  return fs.readdirSync(dir).filter((f) => f.endsWith('.test.ts')).map((f) => fs.readFileSync(path.join(dir, f), 'utf8'));
}

describe('tests by area', () => {
  it('every operation has a suite in test/api/<tag>/ that names it or requests its path', () => {
    const missing = operations()
      .filter((op) => !suites(op.tag).some((text) => text.includes(op.operationId) || pathPattern(op.path).test(text)))
      .map((op) => `${op.operationId} (${op.path}) has no suite in test/api/${op.tag}/`);
    expect(missing).toEqual([]);
  });

  it('the path pattern matches literal and templated paths only', () => {
    const p = pathPattern('/api/setup/tenant/{tenant_id}/export');
    expect(p.test("get(`/api/setup/tenant/${tenant.id}/export`)")).toBe(true);
    expect(p.test("get('/api/setup/tenant/abc/export')")).toBe(true);
    expect(p.test("get('/api/setup/tenant/abc/exports')")).toBe(false);
    expect(p.test("get('/api/setup/tenant/a/b/export')")).toBe(false);
    expect(pathPattern('/api/tenant').test("get('/api/tenant/members')")).toBe(false);
    expect(pathPattern('/api/tenant').test("get('/api/tenant')")).toBe(true);
  });

  it('at most five suites lie directly in test/', () => {
    expect(fs.readdirSync(path.join(ROOT, 'test')).filter((f) => f.endsWith('.test.ts')).length).toBeLessThanOrEqual(5);
  });
});
