/**
 * The console talks to the service only through the client that @hey-api/openapi-ts generates
 * from openapi.yaml (`generated/`): the SDK functions and their TanStack Query options. This file
 * configures that client once (same origin, the signed-in user's bearer token) and turns every
 * error body into something a person can read.
 */
import { client } from '@generated/client.gen';

/** What a failed call tells the person in front of the console. */
export interface ApiProblem {
  /** HTTP status, or 0 when the service could not be reached. */
  status: number;
  /** The error title of the body (`Conflict`, `Rate limit exceeded`, …). */
  error: string;
  /** A full sentence: what went wrong and, where we know, what to do. */
  sentence: string;
  /** The `request_id` of the body, for a support ticket or the service's logs. */
  requestId: string | null;
  /** Seconds to wait (429 `Retry-After`). */
  retryAfterSeconds: number | null;
  /** The body as the service sent it (never shown raw; for code that branches on extras). */
  body: Record<string, unknown>;
}

let currentToken: () => string | null = () => null;
let onUnauthorized: () => void = () => {};

/** Points the generated client at this origin with the session's bearer token. */
export function configureApi(opts: { token: () => string | null; onUnauthorized: () => void }): void {
  currentToken = opts.token;
  onUnauthorized = opts.onUnauthorized;
  client.setConfig({
    baseUrl: window.location.origin,
    // Used for every operation whose contract declares bearer security.
    auth: () => currentToken() ?? undefined,
    credentials: 'omit',
    cache: 'no-store',
  });
}

// Every error, network failures included, becomes an ApiProblem before it reaches a component.
client.interceptors.error.use((error: unknown, response: Response | undefined) => {
  const problem = toProblem(error, response);
  if (problem.status === 401 && currentToken()) onUnauthorized();
  return problem;
});

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The documented error body (`{error, detail, request_id, …}`) as an ApiProblem. */
export function toProblem(error: unknown, response: Response | undefined): ApiProblem {
  if (isApiProblem(error)) return error;
  if (!response) {
    const aborted = error instanceof DOMException && error.name === 'AbortError';
    return {
      status: 0,
      error: aborted ? 'Cancelled' : 'Service unreachable',
      sentence: aborted ? 'The request was cancelled.' : 'The service could not be reached. Check your connection and try again.',
      requestId: null,
      retryAfterSeconds: null,
      body: {},
    };
  }
  const body = isRecord(error) ? error : {};
  const title = typeof body.error === 'string' ? body.error : response.statusText || `HTTP ${response.status}`;
  const detail = typeof body.detail === 'string' ? body.detail : '';
  const requestId = typeof body.request_id === 'string' ? body.request_id : response.headers.get('X-Request-Id');
  const retryHeader = Number(response.headers.get('Retry-After'));
  const retryAfterSeconds = response.status === 429 && Number.isFinite(retryHeader) && retryHeader >= 0 ? Math.ceil(retryHeader) : null;
  return {
    status: response.status,
    error: title,
    sentence: sentenceFor(response.status, title, detail, retryAfterSeconds),
    requestId: requestId ?? null,
    retryAfterSeconds,
    body,
  };
}

export function isApiProblem(v: unknown): v is ApiProblem {
  return isRecord(v) && typeof v.sentence === 'string' && typeof v.status === 'number' && 'requestId' in v;
}

/** Always an ApiProblem, whatever was thrown (a thrown Error from our own code included). */
export function asProblem(v: unknown): ApiProblem {
  if (isApiProblem(v)) return v;
  return {
    status: 0,
    error: 'Error',
    sentence: 'Something went wrong in the console. Reload the page and try again.',
    requestId: null,
    retryAfterSeconds: null,
    body: {},
  };
}

function sentence(text: string): string {
  const t = text.trim();
  if (t === '') return t;
  return /[.!?]$/.test(t) ? t : `${t}.`;
}

/** The service's `detail` is already a sentence; these add what the person can do about it. */
function sentenceFor(status: number, title: string, detail: string, retryAfter: number | null): string {
  const said = sentence(detail);
  switch (title) {
    case 'Rate limit exceeded': {
      const wait = retryAfter === null ? 'a moment' : retryAfter <= 1 ? '1 second' : retryAfter < 120 ? `${retryAfter} seconds` : `${Math.ceil(retryAfter / 60)} minutes`;
      return `Too many requests of this kind. Try again in ${wait}.`;
    }
    case 'Tenant pending approval':
      return `${said || 'This tenant is waiting for approval.'} A platform admin must approve it before its members can use it.`.trim();
    case 'Unauthorized':
      return 'Your sign-in has expired or was not accepted. Sign in again.';
    case 'Service unavailable':
      return `${said || 'The service is unavailable.'} Try again in a moment.`.trim();
    case 'Internal error':
      return 'The service failed to answer this request. Try again; if it keeps failing, give the request ID to whoever runs the service.';
    default:
      if (said) return said;
      if (status === 403) return 'You are not allowed to do this.';
      if (status === 404) return 'This no longer exists.';
      return `The service answered ${status} ${title}.`;
  }
}

/** A problem the console itself found (no request was answered), in the same shape. */
export function localProblem(error: string, sentence: string): ApiProblem {
  return { status: 0, error, sentence, requestId: null, retryAfterSeconds: null, body: {} };
}
