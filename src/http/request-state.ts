/**
 * One typed state object per request, created by the first stage and read by the others
 * (`stateOf(req)`): no untyped `res.locals`. The first stage also writes the access line when
 * the response is finished.
 */
import crypto from 'node:crypto';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { Logger } from 'pino';
import type { Caller } from '../context/claims';
import type { ContractOperation } from './contract';
import type { ApiError } from '../errors';
import { answersGateway, decisionOutcome } from './decision';
import type { AppServices } from '../context/app-services';

/** The validated, coerced parts of a request (what a handler's input is built from; written by the validate stage, ./validate.ts). */
export interface ValidatedInput {
  readonly path: Record<string, unknown>;
  readonly query: Record<string, unknown>;
  readonly body: unknown;
}

export class RequestState {
  /** Verified caller; null until the token stage verified one (or on unauthenticated paths). */
  caller: Caller | null = null;
  /** The SCIM token of a SCIM operation (./scim-token.ts): its tenant and id; null otherwise. */
  scim: { readonly tenantId: string; readonly tokenId: string; readonly forget?: () => void } | null = null;
  /** Why the token was refused; raised after the request has been counted. */
  authError: unknown = null;
  /** The matched operation; null for a path that matches none. */
  operation: ContractOperation | null = null;
  /** Why no operation matched (answered after the request has been counted). */
  miss: 'notFound' | 'methodNotAllowed' | null = null;
  /** On a 405: an operation declared at the path, whose style the refusal is answered in. */
  pathOperation: ContractOperation | null = null;
  /** On a 405: the methods the path answers, for the `Allow` header (./match.ts). */
  allow: readonly string[] = [];
  /** On a miss: the error format of the operations under whose base path it falls (./match.ts). */
  missErrorFormat: ContractOperation['errorFormat'] = 'service';
  /**
   * A refusal found before matching (a malformed X-Tenant under /api): raised as soon as the
   * operation is matched, before counting, so it is answered in that operation's style.
   */
  pendingRefusal: ApiError | null = null;
  /** A refusal found while matching (a malformed path parameter), raised after counting. */
  deferredError: Error | null = null;
  /** Decoded path parameters of the matched operation. */
  params: Record<string, string> = {};
  /** The validated, coerced input of the matched operation (the validate stage). */
  input: ValidatedInput | null = null;
  /** Set by the error stage: the error string, (for 4xx) its detail and (for 401s) the reason, for the access line. */
  error: string | null = null;
  detail: string | null = null;
  reason: string | null = null;
  /** A sign-in request's slot (./sign-in-work.ts): given back while it waits for another server. */
  signInSlot: { outside<T>(work: () => Promise<T>): Promise<T> } | null = null;
  /** Set by the error stage: how late a refusal of an unread body was answered (./refusal-delay.ts); null when at once. */
  heldMs: number | null = null;

  /** The operation whose declarations the answer follows: the matched one, else the one at the path. */
  get answeringOperation(): ContractOperation | null {
    return this.operation ?? this.pathOperation;
  }

  /** The shape of this request's error body: its operation's `x-error-format`, else its base path's. */
  get errorFormat(): ContractOperation['errorFormat'] {
    return this.answeringOperation?.errorFormat ?? this.missErrorFormat;
  }

  constructor(
    readonly requestId: string,
    /** The root logger: stages add `request_id` as a field rather than making a child per request. */
    readonly logger: Logger,
    readonly services: AppServices,
    readonly started: bigint,
  ) {}

  private child: Logger | null = null;
  private address: string | null | undefined = undefined;

  /** The client address (express's req.ip, which follows `trust proxy`), computed once. */
  clientIp(req: Request): string | null {
    if (this.address === undefined) this.address = req.ip ?? null;
    return this.address;
  }

  /** A logger bound to the request id, made only when a handler or domain function logs. */
  get log(): Logger {
    this.child ??= this.logger.child({ request_id: this.requestId });
    return this.child;
  }
}

const STATE = Symbol('tenant-service.request-state');
type StatefulRequest = Request & { [STATE]?: RequestState };

/** The state of a request that went through `requestStateStage`. */
export function stateOf(req: Request): RequestState {
  const state = (req as StatefulRequest)[STATE];
  if (!state) throw new Error('request state missing: requestStateStage must run first');
  return state;
}

/** The state, or undefined for a request that never reached the first stage. */
export function maybeStateOf(req: Request): RequestState | undefined {
  return (req as StatefulRequest)[STATE];
}

/** Attaches a state (the first stage; tests that drive a single stage). */
export function attachState(req: Request, state: RequestState): void {
  (req as StatefulRequest)[STATE] = state;
}

const REQUEST_ID = /^[A-Za-z0-9._-]{8,128}$/;
/** Probes polled by load balancers and scrapers: their access lines are debug, not info. */
const PROBES = new Set(['/healthz', '/readyz', '/metrics']);

/** Stage: request id (echoed in X-Request-Id), the state object, and the access line on finish. */
export function requestStateStage(services: AppServices): RequestHandler {
  return (req: Request, res: Response, next: NextFunction) => {
    const incoming = req.headers['x-request-id'];
    const requestId = typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : crypto.randomUUID();
    res.setHeader('X-Request-Id', requestId);
    attachState(req, new RequestState(requestId, services.logger, services, process.hrtime.bigint()));
    res.on('finish', writeAccessLine);
    next();
  };
}

/** The 'finish' listener (one shared function, `this` is the response): one access line per request. */
function writeAccessLine(this: Response): void {
  const req = this.req;
  const state = maybeStateOf(req);
  if (!state) return;
  const ms = Number(process.hrtime.bigint() - state.started) / 1e6;
  const durationMs = Math.round(ms * 10) / 10;
  const status = this.statusCode;
  const operationId = state.operation?.operationId;
  const line = {
    request_id: state.requestId,
    method: req.method,
    path: req.path,
    status,
    duration_ms: durationMs,
    operation: operationId,
    subject: state.caller?.subject,
    ip: state.clientIp(req) ?? undefined,
    error: state.error ?? undefined,
    detail: state.detail ?? undefined,
    reason: state.reason ?? undefined,
    held_ms: state.heldMs ?? undefined,
  };
  if (PROBES.has(req.path) && status < 400) state.logger.debug(line, 'request completed');
  else state.logger.info(line, 'request completed');
  state.services.metrics?.observeRequest({ operation: operationId ?? null, method: req.method, status, durationMs, held: state.heldMs !== null });
  if (answersGateway(state.answeringOperation)) state.services.metrics?.tenantDecision?.(decisionOutcome(status));
}
