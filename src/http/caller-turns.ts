/**
 * Turns between callers for the event loop (docs/operations.md, "Fairness between callers").
 *
 * Node reads every socket that has data in one pass and, without this stage, runs each request
 * it finds to completion in arrival order: a caller with 32 connections open puts 32 requests'
 * work ahead of a quiet caller's one, and a request that finds no database work to wait for (a
 * decision answered from memory) never yields. This stage only queues the request under its
 * caller and runs one request per turn, in its own turn of the event loop (a `setImmediate`),
 * with the callers taking turns in order (round robin): between two turns node reads its sockets
 * again, so a caller who just arrived waits for at most one request of each caller ahead of it,
 * not for everything a flood has sent. A caller with nothing waiting when its request comes (a
 * sparse caller: one request at a time, as most are) goes before the callers with a backlog, for
 * one request, as fair queueing for networks treats new flows (FQ-CoDel, RFC 8290 section 4.2):
 * it waits for the other sparse callers' requests, never behind a flood. A caller that has been
 * alone for a while (no other caller's request for `ALONE_AFTER_MS`) runs up to four per turn:
 * one request per turn halved what a 32-connection client got answered per second. Any other
 * caller's request ends that for the next `ALONE_AFTER_MS`, so a caller who comes back within
 * that time never waits behind a batch.
 *
 * The caller is known before anything is verified: the issuer and subject of a bearer token this
 * instance verified before (the verified-token cache; several tokens of one person share a
 * turn), else the client address (`trust proxy` applies). So a flood of unknown or forged tokens
 * from one address takes one turn, like a caller without a token. Nothing here decides access;
 * the later stages still verify and check everything.
 *
 * The probes and the key set never wait (`neverWaiting`). A caller may have `maxWaiting` requests waiting; one more is refused at once with 503 and
 * Retry-After. A request whose client went away while waiting is dropped without running.
 */
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { Caller } from '../context/claims';
import { ApiError } from '../errors';
import type { ContractOperation } from './contract';
import { stateOf } from './request-state';

/** How many requests a caller alone in line runs in one turn. */
const LONE_BATCH = 4;
/** How long after another caller's request a caller alone in line still runs one per turn. */
export const ALONE_AFTER_MS = 50;

interface Turn {
  readonly req: Request;
  readonly next: NextFunction;
}

export class CallerTurns {
  /**
   * Callers whose line was empty when their request came (sparse callers): they go first, one
   * request each, then join `waiting` if they still have some. The Maps' insertion order is the
   * turn order.
   */
  private readonly fresh = new Map<string, Turn[]>();
  /** Callers with a backlog, in round robin. */
  private readonly waiting = new Map<string, Turn[]>();
  private scheduled = false;
  private readonly runNext = () => this.runOne();
  /** The caller of the last request queued, and until when its line is not alone (ms, `now`). */
  private lastKey: string | null = null;
  private mixedUntil = 0;

  constructor(
    readonly maxWaiting: number,
    private readonly now: () => number = performance.now.bind(performance),
  ) {}

  /** Queues a request for its caller's turn; false when that caller already has too many waiting. */
  enqueue(key: string, turn: Turn): boolean {
    if (key !== this.lastKey) {
      if (this.lastKey !== null) this.mixedUntil = this.now() + ALONE_AFTER_MS;
      this.lastKey = key;
    }
    const queue = this.waiting.get(key) ?? this.fresh.get(key);
    if (queue) {
      if (queue.length >= this.maxWaiting) return false;
      queue.push(turn);
    } else {
      this.fresh.set(key, [turn]);
    }
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(this.runNext);
    }
    return true;
  }

  /** Requests waiting for their turn. */
  get size(): number {
    let n = 0;
    for (const q of this.fresh.values()) n += q.length;
    for (const q of this.waiting.values()) n += q.length;
    return n;
  }

  /**
   * One turn: the first sparse caller runs its request, else the first caller with a backlog
   * runs its oldest; either then goes to the back of the backlog line with what it still has
   * waiting. A caller alone in line, with no other caller's request for `ALONE_AFTER_MS`, runs
   * up to `LONE_BATCH` requests in its turn: nobody else is waiting for them, and a turn of the
   * event loop per request would cost it throughput.
   */
  private runOne(): void {
    const batch: Turn[] = [];
    while (batch.length === 0 && this.fresh.size + this.waiting.size > 0) {
      const line = this.fresh.size > 0 ? this.fresh : this.waiting;
      const [key, queue] = line.entries().next().value as [string, Turn[]];
      const take = this.fresh.size + this.waiting.size === 1 && this.now() >= this.mixedUntil ? LONE_BATCH : 1;
      while (batch.length < take && queue.length > 0) {
        const turn = queue.shift()!;
        // A client that went away while waiting: nothing to answer, so it costs no turn.
        if (!turn.req.socket.destroyed) batch.push(turn);
      }
      line.delete(key);
      if (queue.length > 0) this.waiting.set(key, queue);
    }
    if (this.fresh.size + this.waiting.size > 0) setImmediate(this.runNext);
    else this.scheduled = false;
    // The requests run in this macrotask; their promises settle before the next turn starts. One
    // that throws is answered by the error stage and never keeps the rest of the batch from running.
    for (const turn of batch) {
      try {
        turn.next();
      } catch (err) {
        turn.next(err);
      }
    }
  }
}

/** Whose turn a request waits for: a known token's person, else the client address. */
export function turnKey(req: Request, knownCaller: (req: Request) => Caller | null): string {
  const caller = knownCaller(req);
  if (caller) return `caller\u0000${caller.issuer}\u0000${caller.subject}`;
  return `address\u0000${stateOf(req).clientIp(req) ?? ''}`;
}

/**
 * The requests that never wait for a turn: the operations the contract declares public and
 * uncounted at a fixed path (the probes, the key set), so a load balancer always gets its answer.
 */
export function neverWaiting(operations: readonly ContractOperation[]): ReadonlySet<string> {
  return new Set(operations.filter((op) => op.access === 'public' && op.rateLimit === null && !op.path.includes('{')).map((op) => `${op.method} ${op.path}`));
}

/** Stage: the request waits for its caller's turn (after the request state exists, before any other work). */
export function callerTurnsStage(turns: CallerTurns, knownCaller: (req: Request) => Caller | null, exempt: ReadonlySet<string>): RequestHandler {
  return (req: Request, _res: Response, next: NextFunction) => {
    if (exempt.size > 0 && exempt.has(`${req.method === 'HEAD' ? 'GET' : req.method} ${req.path}`)) return next();
    if (!turns.enqueue(turnKey(req, knownCaller), { req, next })) {
      next(new ApiError('unavailable', `Too many requests of this caller are waiting (${turns.maxWaiting}); retry later.`, {}, { 'Retry-After': '1' }));
    }
  };
}
