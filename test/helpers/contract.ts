/**
 * Response validation against openapi.yaml, shared by the supertest hook and the tests that
 * call a listening server with fetch or the generated client.
 */
import addFormats from 'ajv-formats';
import OpenAPIBackend, { type Document } from 'openapi-backend';
import { loadOpenApiDocument } from '../../src/openapi-document';

interface ResponseLike {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: unknown;
  type?: string;
}

let backend: OpenAPIBackend | null = null;
let ready: Promise<unknown> | null = null;

/** Loads and dereferences the contract; await it before validating. */
export function initContract(): Promise<unknown> {
  create();
  return ready!;
}

function create(): OpenAPIBackend {
  if (!backend) {
    backend = new OpenAPIBackend({
      definition: loadOpenApiDocument() as unknown as Document,
      // Validators compiled when an operation is first checked, not all of them in every test
      // file (that cost ~7 s of CPU per file); test/contract/contract-compiles.test.ts checks
      // once that the definition is valid and that every validator compiles.
      quick: true,
      validate: true,
      customizeAjv: (ajv) => {
        addFormats(ajv);
        return ajv;
      },
    });
    ready = backend.init();
  }
  return backend;
}

function api(): OpenAPIBackend {
  const backend = create();
  if (!backend.initialized) throw new Error('contract not initialised: await initContract() first');
  return backend;
}

/** Paths served outside the API contract (documentation pages, the console). */
const OUTSIDE_CONTRACT = [/^\/docs(\/|$)/, /^\/console(\/|$)/, /^\/openapi\.(json|yaml)$/];

/** The GET operation that answers `method` too (its `x-forwarded-methods`: the gateway decision). */
function forwardedOperation(method: string, pathname: string) {
  const op = api().matchOperation({ method: 'get', path: pathname, headers: {}, query: {} });
  const forwarded = (op as unknown as { 'x-forwarded-methods'?: string[] } | undefined)?.['x-forwarded-methods'];
  return op && forwarded?.includes(method.toUpperCase()) ? op : undefined;
}

/** Returns a sentence describing how the response breaks the contract, or null. */
export function contractProblem(method: string, url: string, res: ResponseLike): string | null {
  const pathname = new URL(url, 'http://x').pathname;
  if (OUTSIDE_CONTRACT.some((r) => r.test(pathname))) return null;
  const where = `${method.toUpperCase()} ${pathname} → ${res.status}`;
  const type = res.type ?? String(res.headers['content-type'] ?? '');
  // Newline-delimited JSON (a tenant export) is checked by its media type: its lines are not one document.
  const isNdjson = type.includes('application/x-ndjson');
  const isJson = type.includes('json') && !isNdjson;
  const scimErrorOk = () => {
    const b = res.body as Record<string, unknown>;
    const ok =
      type.startsWith('application/scim+json') &&
      b &&
      Array.isArray(b.schemas) &&
      b.schemas.length === 1 &&
      b.schemas[0] === 'urn:ietf:params:scim:api:messages:2.0:Error' &&
      b.status === String(res.status) &&
      typeof b.detail === 'string';
    return ok ? null : `${where}: not a SCIM error body (${type}): ${JSON.stringify(res.body)}`;
  };
  const errorSchemaOk = () => {
    const b = res.body as Record<string, unknown>;
    if (!b || typeof b.error !== 'string' || typeof b.detail !== 'string') return `${where}: error body lacks error/detail: ${JSON.stringify(res.body)}`;
    if (/\bat .+:\d+:\d+/.test(b.detail)) return `${where}: error detail leaks a stack trace`;
    return null;
  };
  const op = api().matchOperation({ method, path: pathname, headers: {}, query: {} }) ?? forwardedOperation(method, pathname);
  if (!op) {
    if (res.status < 400) return `${where}: no operation in openapi.yaml matches`;
    // Under the SCIM base a directory reads every answer as SCIM: a miss is a SCIM error too.
    if (pathname === '/scim/v2' || pathname.startsWith('/scim/v2/')) return scimErrorOk();
    return errorSchemaOk();
  }
  const responses = (op.responses ?? {}) as Record<string, { headers?: Record<string, { schema?: { type?: string } }> }>;
  const documented = responses[String(res.status)] ?? responses.default;
  // 405/413/415/429/500/503 may come from the pipeline before the operation is known.
  const pipelineStatuses = [401, 405, 413, 415, 429, 500, 503];
  if (!documented) {
    if (pipelineStatuses.includes(res.status) && res.status !== 500) return errorSchemaOk();
    return `${where}: status ${res.status} is not documented for ${op.operationId}`;
  }
  // Error statuses carry the Error body, unless the operation documents another body for them
  // (GET /readyz answers 503 with its Readiness body).
  const documentedSchema = (documented as { content?: Record<string, { schema?: { properties?: Record<string, unknown> } }> }).content?.[
    'application/json'
  ]?.schema;
  if (res.status >= 400 && (!documentedSchema || documentedSchema.properties?.error)) {
    const problem = errorSchemaOk();
    if (problem) return problem;
  }
  if (isNdjson && !(documented as { content?: Record<string, unknown> }).content?.['application/x-ndjson']) {
    return `${where}: application/x-ndjson is not documented for ${op.operationId} ${res.status}`;
  }
  // A HEAD answer carries the GET's headers and no body.
  if (res.status !== 204 && isJson && method.toUpperCase() !== 'HEAD') {
    const result = api().validateResponse(res.body, op, res.status);
    if (result.errors?.length) return `${where}: body does not match ${op.operationId}: ${JSON.stringify(result.errors.slice(0, 3))}`;
  }
  for (const [name, h] of Object.entries(documented.headers ?? {})) {
    const value = res.headers[name.toLowerCase()];
    const resolved = h as { schema?: { type?: string }; $ref?: string };
    if (value === undefined) continue;
    const schema = resolved.schema;
    if (schema?.type === 'integer' && !/^\d+$/.test(String(value))) return `${where}: header ${name} is not an integer: ${String(value)}`;
  }
  return null;
}
