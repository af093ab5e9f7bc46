/**
 * Stage: the request body, read only for operations that declare a requestBody, at most 1 MiB
 * of UTF-8 JSON. Before JSON.parse one linear pass over the raw bytes (no allocation per
 * element) refuses nesting deeper than 32 levels and the NUL escape (`\u0000`), which
 * PostgreSQL cannot store. A body sent to an operation that takes none is refused unread, except
 * on an operation answering forwarded methods (the gateway decision), which ignores it unread.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import express, { type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import { ApiError } from '../errors';
import { STREAMED_BODY_TYPE } from './contract';
import { stateOf } from './request-state';

/** The largest request body read: 1 MiB. */
export const BODY_LIMIT = 1024 * 1024;

/** The refusal of a body over the limit, declared or read. */
export function tooLarge(): ApiError {
  return new ApiError('payloadTooLarge', 'The body is larger than 1 MiB.');
}

export const MAX_JSON_DEPTH = 32;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACKET = 0x5b;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACKET = 0x5d;
const CLOSE_BRACE = 0x7d;
const LETTER_U = 0x75;
const DIGIT_0 = 0x30;

/** What the raw-byte scan found: nothing, nesting over the limit, or a `\u0000` escape. */
export type JsonScan = 'ok' | 'tooDeep' | 'nul';

/**
 * One pass over UTF-8 JSON bytes: bracket depth outside strings and `\u0000` escapes inside
 * them (multi-byte UTF-8 sequences never contain these ASCII bytes). Malformed JSON is left to
 * JSON.parse; a raw NUL byte is invalid JSON and refused there.
 */
export function scanJson(buf: Uint8Array, maxDepth: number = MAX_JSON_DEPTH): JsonScan {
  let depth = 0;
  let inString = false;
  const n = buf.length;
  for (let i = 0; i < n; i++) {
    const c = buf[i]!;
    if (inString) {
      if (c === BACKSLASH) {
        if (buf[i + 1] === LETTER_U && buf[i + 2] === DIGIT_0 && buf[i + 3] === DIGIT_0 && buf[i + 4] === DIGIT_0 && buf[i + 5] === DIGIT_0) return 'nul';
        i++; // the escaped character, whatever it is, does not end the string
      } else if (c === QUOTE) {
        inString = false;
      }
    } else if (c === QUOTE) {
      inString = true;
    } else if (c === OPEN_BRACKET || c === OPEN_BRACE) {
      if (++depth > maxDepth) return 'tooDeep';
    } else if (c === CLOSE_BRACKET || c === CLOSE_BRACE) {
      depth--;
    }
  }
  return 'ok';
}

/** body-parser's verify hook: runs on the raw bytes, before JSON.parse. */
function verify(_req: IncomingMessage, _res: ServerResponse, buf: Buffer): void {
  const found = scanJson(buf);
  if (found === 'tooDeep') throw Object.assign(new Error('too deep'), { type: 'json.too.deep' });
  if (found === 'nul') throw Object.assign(new Error('NUL'), { type: 'json.nul' });
}

/** Maps the scan's refusals (raised through body-parser) to the error catalog. */
export function bodyScanError(type: string): ApiError | null {
  if (type === 'json.too.deep') return new ApiError('badRequest', `The JSON body is nested more than ${MAX_JSON_DEPTH} levels deep.`);
  if (type === 'json.nul') return new ApiError('validation', 'body must not contain the NUL character (U+0000) in any key or string.');
  return null;
}

function hasBody(req: Request): boolean {
  return req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0;
}

const NOT_JSON = 'Request bodies must be JSON sent with Content-Type: application/json.';

/** Refuses a charset other than UTF-8 without reading: 400 for other UTF encodings, else 415. */
function charsetProblem(req: Request): ApiError | null {
  const m = /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(req.headers['content-type'] ?? '');
  if (!m) return null;
  const charset = m[1]!.toLowerCase();
  if (charset === 'utf-8' || charset === 'utf8') return null;
  if (charset.startsWith('utf-')) return new ApiError('badRequest', 'The body must be UTF-8 encoded JSON.');
  return new ApiError('unsupportedMediaType', 'The body must be UTF-8 JSON.');
}

export function bodyStage(): RequestHandler {
  // The media type was checked against the operation's requestBody before the parser runs.
  const json = express.json({ limit: BODY_LIMIT, strict: false, type: () => true, verify });
  return (req: Request, res: Response, next: NextFunction) => {
    const op = stateOf(req).operation!;
    if (!hasBody(req)) return next();
    if (op.forwardedMethods.length > 0) {
      // A gateway's forwarded request: the body is the product's, never read here. Closing the
      // connection after the answer spares reading (even discarding) a body of any size.
      res.setHeader('Connection', 'close');
      return next();
    }
    if (op.streamedBody) {
      // Declared by the operation's contract: its handler reads the stream, with its own limit.
      if (req.is(STREAMED_BODY_TYPE) !== STREAMED_BODY_TYPE) return next(new ApiError('unsupportedMediaType', `${op.method} ${op.path} takes ${STREAMED_BODY_TYPE}.`));
      return next();
    }
    // The JSON media types the operation declares (SCIM operations take application/scim+json too).
    const isJson = typeof req.is(op.bodyTypes.length > 0 ? [...op.bodyTypes] : ['application/json']) === 'string';
    if (!op.takesBody) {
      if (!isJson) return next(new ApiError('unsupportedMediaType', NOT_JSON));
      return next(new ApiError('badRequest', `${op.method} ${op.path} takes no request body.`));
    }
    if (!isJson) return next(new ApiError('unsupportedMediaType', NOT_JSON));
    const charset = charsetProblem(req);
    if (charset) return next(charset);
    // A declared length over the limit is refused unread: body-parser would read the whole body
    // off the connection (however large it says it is) before answering 413.
    if (Number(req.headers['content-length'] ?? 0) > BODY_LIMIT) return next(tooLarge());
    json(req, res, (err?: unknown) => {
      if (err) return next(err);
      // A body that is a JSON string is refused: every request body of the contract is an object.
      if (typeof req.body === 'string') return next(new ApiError('validation', 'body must be a JSON object, not a JSON string.'));
      next();
    });
  };
}
