/**
 * Stage: the operation's handler, with its tenant entered for tenant operations, and the typed
 * reply written. The table was checked against the contract at boot (`checkOperationTable`).
 */
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { Logger } from 'pino';
import type { Config } from '../config';
import type { AnyHandler, HandlerInput, Reply } from './handler-contract';
import { enterTenant } from '../tenancy/enter';
import { runScim } from './scim-dispatch';
import { observeTenantResolution } from './metrics';
import type { AuthenticatedContext, RequestContext } from '../context/request';
import { requestOrigin, type EventOrigin } from '../context/origin';
import type { ContractOperation } from './contract';
import { stateOf, type RequestState } from './request-state';

type Run = (ctx: unknown, input: HandlerInput) => Promise<Reply<Record<number, unknown>>>;

/** The handler kinds each access level may be served by. */
const KINDS_FOR_ACCESS: Record<ContractOperation['access'], ReadonlyArray<AnyHandler['kind']>> = {
  public: ['public'],
  caller: ['caller'],
  platformAdmin: ['caller'],
  tenantMember: ['tenant', 'tenantRead'],
  tenantAdmin: ['tenant', 'tenantRead'],
  tenantPlatformAdmin: ['tenant', 'tenantRead'],
  scimToken: ['scim'],
};

/** Boot check (the types already say so): one handler per operation, of a kind its access level fits. */
export function checkOperationTable(table: Readonly<Record<string, AnyHandler>>, operations: readonly ContractOperation[]): void {
  const ids = new Set(operations.map((o) => o.operationId));
  for (const id of Object.keys(table)) if (!ids.has(id)) throw new Error(`handler '${id}' has no operation in openapi.yaml`);
  for (const op of operations) {
    const h = table[op.operationId];
    if (!h) throw new Error(`operation '${op.operationId}' has no handler`);
    if (!KINDS_FOR_ACCESS[op.access].includes(h.kind)) throw new Error(`handler '${op.operationId}' is '${h.kind}' but x-access is '${op.access}'`);
  }
}

/** The RequestContext of a handler; its logger is made only if the handler logs. */
class HandlerContext implements RequestContext {
  constructor(
    private readonly state: RequestState,
    readonly config: Config,
    /** The client address (req.ip: X-Forwarded-For only with SERVICE_TRUST_PROXY), for events. */
    readonly ip: string | null,
  ) {}
  get requestId(): string {
    return this.state.requestId;
  }
  get log(): Logger {
    return this.state.log;
  }
  get caller() {
    return this.state.caller;
  }
  get services() {
    return this.state.services;
  }
  private madeOrigin: EventOrigin | null = null;
  get origin(): EventOrigin {
    this.madeOrigin ??= requestOrigin(this);
    return this.madeOrigin;
  }
}

function tenantHeader(req: Request): string | null {
  const h = req.headers['x-tenant'];
  return typeof h === 'string' ? h : null;
}

/**
 * Whose decision facts a write may have changed: a platform operation's, everyone's (`*`); a
 * tenant's transaction (SCIM, tenant operations) writes only that tenant's rows (row-level
 * security), so only its facts; null while the handler has not run (nothing was committed).
 */
interface WriteScope {
  tenantId: string | null;
}

async function run(handler: AnyHandler, op: ContractOperation, ctx: HandlerContext, input: HandlerInput, req: Request, scope: WriteScope): Promise<Reply<Record<number, unknown>>> {
  const call = handler.run as unknown as Run;
  switch (handler.kind) {
    case 'public':
    case 'caller':
      scope.tenantId = '*';
      return call(ctx, input);
    case 'scim': {
      const scim = stateOf(req).scim;
      scope.tenantId = scim?.tenantId ?? null;
      return runScim(ctx, scim, (sctx) => call(sctx, input));
    }
    case 'tenantRead':
    case 'tenant': {
      if (op.access !== 'tenantMember' && op.access !== 'tenantAdmin' && op.access !== 'tenantPlatformAdmin') {
        throw new Error(`handler '${op.operationId}' is a tenant handler but x-access is '${op.access}'`);
      }
      const access = { level: op.access, permission: op.permission, method: op.method, path: op.path };
      const header = tenantHeader(req);
      const actx = ctx as AuthenticatedContext;
      if (handler.kind === 'tenantRead') {
        const entry = await observeTenantResolution(ctx, header, async (entered) => {
          const e = await enterTenant(actx, header, access);
          entered(e.source);
          return e;
        });
        return call(entry, input);
      }
      return observeTenantResolution(ctx, header, (entered) =>
        enterTenant(actx, header, access, (tctx) => {
          entered(tctx.source);
          scope.tenantId = tctx.tenant.id;
          return call(tctx, input);
        }),
      );
    }
  }
}

export function dispatchStage(table: Readonly<Record<string, AnyHandler>>, config: Config): RequestHandler {
  return async (req: Request, res: Response, next: NextFunction) => {
    try {
      const state = stateOf(req);
      const op = state.operation!;
      const validated = state.input!;
      const input: HandlerInput = {
        url: op.path,
        body: validated.body,
        path: validated.path,
        query: validated.query,
        headers: req.headers as Record<string, string | undefined>,
        bodyStream: op.streamedBody ? req : null,
      };
      const handler = table[op.operationId]!;
      let reply: Reply<Record<number, unknown>>;
      const scope: WriteScope = { tenantId: null };
      try {
        reply = await run(handler, op, new HandlerContext(state, config, state.clientIp(req)), input, req, scope);
      } finally {
        // A write committed here is honoured by this instance's next request at once: the answer
        // waits until its change has been dropped (docs/architecture.md "Decisions from memory").
        // Only committed changes drop facts, and only their tenants': a refused write drops nothing.
        if (op.method !== 'GET' && op.method !== 'HEAD' && handler.kind !== 'tenantRead' && scope.tenantId !== null) await state.services.decisionMemory?.afterWrite(scope.tenantId);
      }
      res.status(reply.status as number);
      if (reply.headers) for (const [k, v] of Object.entries(reply.headers)) res.setHeader(k, v);
      if (reply.stream) {
        try {
          await reply.stream(res);
        } catch (err) {
          // Cut short: without its last line the client cannot take the body for complete.
          if (res.headersSent) res.destroy();
          throw err;
        }
        res.end();
      } else if (reply.status === 204 || reply.body === undefined) res.end();
      else if (typeof reply.body === 'string' && reply.headers?.['Content-Type']?.startsWith('text/')) res.send(reply.body); // GET /metrics
      else res.json(reply.body);
    } catch (err) {
      next(err);
    }
  };
}
