/**
 * The one error middleware: every failure becomes the documented Error body with the request
 * id; anything that is not an ApiError (or a known library or database error) is logged and
 * answered with a plain 500.
 */
import crypto from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';
import type { Logger } from 'pino';
import type { Error as ContractError } from '../../generated/types.gen';
import { mapDatabaseError } from '../db/database-errors';
import { ApiError, type ErrorBody } from '../errors';
import { bodyScanError, tooLarge } from './body';
import { answersGateway, decisionRefusal } from './decision';
import { maybeStateOf } from './request-state';
import { answerRefusal, DELAY_MS, type RefusalDelay } from './refusal-delay';
import { sendScimError } from './scim-error';

/** body-parser's errors, the body scan's refusals, then database errors. */
export function toApiError(err: unknown): ApiError | null {
  if (err instanceof ApiError) return err;
  // The router answers a malformed percent-escape itself; any other decode of client input that
  // throws is still the client's bad input, not a server fault.
  if (err instanceof URIError) return new ApiError('badRequest', 'The request contains a malformed percent-escape (%XX that is not UTF-8).');
  const e = err as { type?: string };
  if (e && typeof e === 'object' && typeof e.type === 'string') {
    switch (e.type) {
      case 'entity.too.large':
        return tooLarge();
      case 'entity.parse.failed':
        return new ApiError('badRequest', 'The body is not valid JSON.');
      case 'encoding.unsupported':
      case 'charset.unsupported':
        return new ApiError('unsupportedMediaType', 'The body must be UTF-8 JSON.');
      case 'request.aborted':
      case 'request.size.invalid':
      case 'stream.encoding.set':
        return new ApiError('badRequest', 'The body could not be read.');
      default: {
        const scanned = bodyScanError(e.type);
        if (scanned) return scanned;
      }
    }
  }
  return mapDatabaseError(err);
}

// src/errors.ts spells the Error body itself (it imports nothing): it must fit the contract's,
// field for field, or this line fails to compile.
type SameKeys<A, B> = [Exclude<keyof A, keyof B> | Exclude<keyof B, keyof A>] extends [never] ? true : false;
export const errorBodyFitsContract: [ErrorBody extends ContractError ? true : false, SameKeys<ErrorBody, ContractError>] = [true, true];

function hasUnreadBody(req: Request): boolean {
  return req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0;
}

export function errorStage(rootLogger: Logger, refusals: RefusalDelay) {
  return (err: unknown, req: Request, res: Response, _next: NextFunction): void => {
    const state = maybeStateOf(req);
    const requestId = state?.requestId ?? crypto.randomUUID();
    const apiError = toApiError(err);
    if (!apiError) {
      rootLogger.error({ request_id: requestId, err }, 'Unhandled error');
    } else if (apiError.status >= 500) {
      rootLogger.warn({ request_id: requestId, err, error: apiError.error }, 'Request failed');
    }
    const failure = apiError ?? new ApiError('internal', `An unexpected error occurred; quote request id ${requestId} when reporting it.`);
    // An operation answering gateways (x-gateway-auth) refuses only with statuses gateways pass on
    // (src/http/decision.ts), whichever stage refused (a malformed X-Tenant waits for the match,
    // src/http/tenant-header.ts).
    const e = answersGateway(state?.answeringOperation) ? decisionRefusal(failure) : failure;
    if (state) {
      state.error = e.error;
      // What the client was told, so a 4xx in the log explains itself (bounded: details may quote input).
      if (e.status < 500) state.detail = e.detail.length > 500 ? `${e.detail.slice(0, 500)}…` : e.detail;
      // A 401's reason for the access line: the detail never contains the token.
      if (e.status === 401) state.reason = e.detail;
    }
    if (res.headersSent) {
      res.end();
      return;
    }
    res.status(e.status);
    for (const [k, v] of Object.entries(e.headers)) res.setHeader(k, v);
    // A refused request whose body was never read: close the connection after the answer
    // instead of reading (up to 1 MiB of) a body nobody will use.
    const unread = !req.complete && hasUnreadBody(req);
    if (unread) res.setHeader('Connection', 'close');
    if (e.kind === 'unauthorized' && !res.getHeader('WWW-Authenticate')) res.setHeader('WWW-Authenticate', 'Bearer realm="tenant-service"');
    // Declared per operation (x-error-format): a SCIM operation answers SCIM errors, and so does
    // a path under the SCIM base that matches none (a 404 or 405 a directory must be able to read).
    const send = () => {
      if (state?.errorFormat === 'scim') sendScimError(res, e, requestId);
      else res.json(e.toBody(requestId));
    };
    // A client's refusals of unread bodies past its budget are answered late (./refusal-delay.ts);
    // never a gateway's auth request, whose refusals its product's visitors wait for.
    if (unread && e.status < 500 && !answersGateway(state?.answeringOperation)) {
      if (answerRefusal(refusals, req, state ? state.clientIp(req) : req.socket.remoteAddress, send) && state) state.heldMs = DELAY_MS;
      return;
    }
    send();
  };
}
