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

/** A fresh copy of the parsed OpenAPI document (callers may mutate it). */
export function loadOpenApiDocument(): Record<string, unknown> {
  if (!cached) {
    const file = openApiPath();
    cached = { file, doc: yaml.load(fs.readFileSync(file, 'utf8')) as Record<string, unknown> };
  }
  return structuredClone(cached.doc);
}
