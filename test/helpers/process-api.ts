/**
 * Requests to a server process (./server-process.ts) over real HTTP, each answer checked against
 * openapi.yaml like supertest's are in-process. Call `initContract()` (./contract.ts) in beforeAll.
 */
import { contractProblem } from './contract';

export interface ProcessAnswer {
  status: number;
  headers: Record<string, string>;
  body: any; // eslint-disable-line @typescript-eslint/no-explicit-any -- a JSON answer, read by the test
}

/** `method path` on `baseUrl` with an optional bearer token, X-Tenant and JSON body; fails the test on a contract break. */
export async function callProcess(
  baseUrl: string,
  method: string,
  path: string,
  opts: { token?: string; tenant?: string; body?: unknown } = {},
): Promise<ProcessAnswer> {
  const headers: Record<string, string> = {};
  if (opts.token) headers.Authorization = `Bearer ${opts.token}`;
  if (opts.tenant) headers['X-Tenant'] = opts.tenant;
  if (opts.body !== undefined) headers['Content-Type'] = 'application/json';
  const r = await fetch(`${baseUrl}${path}`, {
    method,
    headers,
    body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
    signal: AbortSignal.timeout(30_000),
  });
  const text = await r.text();
  const answer: ProcessAnswer = {
    status: r.status,
    headers: Object.fromEntries(r.headers.entries()),
    body: text && (r.headers.get('content-type') ?? '').includes('json') ? JSON.parse(text) : text,
  };
  const problem = contractProblem(method, path, answer);
  if (problem) throw new Error(problem);
  return answer;
}
