/**
 * The limits of a request's head, answered with the documented error body (docs/operations.md
 * "Limits of a request"): a URL longer than URL_MAX_BYTES is 414, a header block (names and
 * values) larger than HEADERS_MAX_BYTES is 431, both before express sees the request.
 *
 * Node's HTTP parser refuses a head past `maxHeaderSize` itself and, by default, writes a bare
 * `431` with no body (for a long URL too). So the parser's bound is set above the two limits
 * (PARSER_MAX_HEADER_BYTES): every head up to it reaches `refuseOversized`, which tells a long URL
 * from a large header block exactly. A head past even the parser's bound, and any other request
 * the parser refuses (not HTTP: 400; past the request timeout: 408), reaches `answerClientError`
 * (Node's 'clientError' event), which answers as Node would, with the body: 414 when the bytes
 * the parser was given show the request line itself past URL_MAX_BYTES, else 431.
 */
import crypto from 'node:crypto';
import type http from 'node:http';
import type { Duplex } from 'node:stream';
import { ApiError, type ErrorKind } from '../errors';

/** A URL past this many bytes is 414 (nginx refuses at 8 KiB by default, Node's parser at 16 KiB for the whole head). */
export const URL_MAX_BYTES = 16 * 1024;
/** Header names and values past this many bytes in all are 431 (Node's default bound for the head). */
export const HEADERS_MAX_BYTES = 16 * 1024;
/** Node's parser bound on the head (URL and headers): above both limits, so they are answered exactly. */
export const PARSER_MAX_HEADER_BYTES = 32 * 1024;

export type ErrorFormatOf = (path: string) => 'scim' | 'service';

const SCIM_ERROR_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:Error';

/** The status line, headers and body of a refusal, in the error format of `path`. */
function refusal(kind: ErrorKind, detail: string, path: string | null, errorFormatOf: ErrorFormatOf) {
  const e = new ApiError(kind, detail);
  const requestId = crypto.randomUUID();
  const scim = path !== null && errorFormatOf(path) === 'scim';
  const body = scim
    ? JSON.stringify({ schemas: [SCIM_ERROR_SCHEMA], status: String(e.status), detail: e.detail })
    : JSON.stringify(e.toBody(requestId));
  const headers: Record<string, string> = {
    'Content-Type': `${scim ? 'application/scim+json' : 'application/json'}; charset=utf-8`,
    'Content-Length': String(Buffer.byteLength(body)),
    'X-Request-Id': requestId,
    'Cache-Control': 'no-store',
    Connection: 'close',
  };
  return { status: e.status, reason: e.error, headers, body };
}

const pathOf = (url: string): string => {
  const q = url.indexOf('?');
  return q === -1 ? url : url.slice(0, q);
};

/** Answers a request whose URL or header block is past its limit; false when it is within both. */
export function refuseOversized(req: http.IncomingMessage, res: http.ServerResponse, errorFormatOf: ErrorFormatOf): boolean {
  const url = req.url ?? '';
  let kind: ErrorKind | null = null;
  let detail = '';
  if (url.length > URL_MAX_BYTES) {
    kind = 'uriTooLong';
    detail = `The URL is ${url.length} bytes long; at most ${URL_MAX_BYTES} are accepted.`;
  } else {
    let size = 0;
    const raw = req.rawHeaders;
    for (let i = 0; i < raw.length; i++) size += raw[i]!.length;
    if (size > HEADERS_MAX_BYTES) {
      kind = 'headersTooLarge';
      detail = `The request's headers are ${size} bytes (names and values); at most ${HEADERS_MAX_BYTES} are accepted.`;
    }
  }
  if (kind === null) return false;
  // The path only picks the error format; a long one is cut short first.
  const r = refusal(kind, detail, pathOf(url.slice(0, 256)), errorFormatOf);
  res.shouldKeepAlive = false;
  res.writeHead(r.status, r.headers);
  res.end(r.body);
  // What the client still sends (a body) is not read: the connection closes after the answer.
  req.resume();
  return true;
}

interface ParserError extends Error {
  code?: string;
  /** The bytes the parser was given when it failed (Node sets it on a 'clientError'). */
  rawPacket?: Buffer;
}

const REQUEST_LINE = /^[A-Z]{3,10} (\S*)/;

/** Whether the parser's bytes show a request line past URL_MAX_BYTES (its end not in them, or far in), and its path. */
function requestLineOf(raw: Buffer | undefined): { tooLong: boolean; path: string | null } {
  if (!raw) return { tooLong: false, path: null };
  const start = REQUEST_LINE.exec(raw.subarray(0, 512).toString('latin1'));
  if (!start) return { tooLong: false, path: null };
  const end = raw.indexOf('\r\n');
  return { tooLong: end === -1 || end > URL_MAX_BYTES, path: pathOf(start[1]!) };
}

/**
 * Node's 'clientError': what the parser refused, answered as Node would (nothing when an answer is
 * already under way or the socket cannot be written) but with the error body.
 */
export function answerClientError(err: Error, socket: Duplex, errorFormatOf: ErrorFormatOf): void {
  const e = err as ParserError;
  // Node's own check: an answer whose head has gone out cannot be followed by another.
  const inFlight = (socket as { _httpMessage?: http.ServerResponse | null })._httpMessage;
  if (e.code === 'ECONNRESET' || !socket.writable || inFlight?.headersSent) {
    socket.destroy(err);
    return;
  }
  const line = requestLineOf(e.rawPacket);
  let r: ReturnType<typeof refusal>;
  switch (e.code) {
    case 'HPE_HEADER_OVERFLOW':
      r = line.tooLong
        ? refusal('uriTooLong', `The URL is longer than ${URL_MAX_BYTES} bytes.`, line.path, errorFormatOf)
        : refusal('headersTooLarge', `The request's head is larger than ${PARSER_MAX_HEADER_BYTES} bytes.`, line.path, errorFormatOf);
      break;
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      r = refusal('payloadTooLarge', 'The chunk extensions of the body are too large.', line.path, errorFormatOf);
      break;
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      r = refusal('requestTimeout', 'The request was not received in time (SERVICE_REQUEST_TIMEOUT_MS).', line.path, errorFormatOf);
      break;
    default:
      r = refusal('badRequest', 'The request is not valid HTTP/1.1.', line.path, errorFormatOf);
  }
  const head = Object.entries(r.headers).map(([k, v]) => `${k}: ${v}\r\n`).join('');
  socket.write(`HTTP/1.1 ${r.status} ${r.reason}\r\n${head}\r\n${r.body}`);
  socket.destroy(err);
}
