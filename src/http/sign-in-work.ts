/**
 * Sign-ins beside decisions (docs/operations.md, "Sign-ins beside decisions"). Each step of a
 * sign-in (the provider's `/oidc` routes, the SSO callbacks under `/sso`) is milliseconds of work
 * on the event loop — the protocol library, signing, a dozen statements — where a decision is
 * microseconds. Unbounded, every step of every sign-in in progress runs ahead of the decisions
 * that arrive meanwhile, and another tenant's decisions wait behind a sign-in storm. So at most
 * `slots` sign-in requests do their work at once on an instance; the others wait in their
 * address's line, the lines taking turns (a FairQueue without a reserved last slot: the people of
 * one office share an address). A request gives its slot back while it waits for another server
 * — the tenant's identity provider, the mail server — (`outsideSignInSlot`) or for the browser's
 * form upload (`readBodyOutsideSignInSlot`), and waits for one again before going on, so a slow
 * identity provider or upload never holds a slot. A request that holds
 * its slot longer than `holdMs` (a statement waiting on a lock) gives it back and finishes
 * uncounted, like the API's slots.
 */
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { ApiError } from '../errors';
import { FairQueue } from './fair-queue';
import type { SignInLoad } from './metrics';
import { maybeStateOf, stateOf } from './request-state';

/** The paths whose requests take a sign-in slot: the provider's and the SSO routes. */
export function isSignInPath(path: string): boolean {
  return path === '/oidc' || path.startsWith('/oidc/') || path.startsWith('/sso/');
}

/** The sign-in slots of an instance: a FairQueue without a reserved last slot, and who is away. */
export class SignInWork {
  /** Requests waiting for another server now. */
  elsewhere = 0;
  readonly queue: FairQueue;

  constructor(
    slots: number,
    /** How many requests one address may have waiting; beyond it the request is refused. */
    maxWaitingPerAddress: number,
    /** How long a request holds its slot at most. */
    holdMs: number,
  ) {
    this.queue = new FairQueue(slots, maxWaitingPerAddress, holdMs, false);
  }

  get load(): SignInLoad {
    const { running, waiting } = this.queue.load;
    return { working: running, waiting, elsewhere: this.elsewhere };
  }
}

/** One request's hold on a slot: waiting, doing its work, waiting for another server, or done. */
export class SignInSlot {
  private phase: 'waiting' | 'running' | 'outside' | 'uncounted' | 'finished' = 'waiting';
  private timer: NodeJS.Timeout | null = null;
  /** What goes on when the slot is given: the request's next stage, or its work after another server answered. */
  private resume: (() => void) | null = null;
  /** Whether `resume` is the work after another server answered (which finishes even when the client went away). */
  private afterOutside = false;

  private readonly queue: FairQueue;

  constructor(
    private readonly work: SignInWork,
    private readonly key: string,
  ) {
    this.queue = work.queue;
  }

  /** Waits for a slot, then calls `go`; false when the address already has too many waiting. */
  enter(go: () => void): boolean {
    this.resume = go;
    this.afterOutside = false;
    return this.queue.admit(this.key, this.start);
  }

  /**
   * Runs `work` (a request to another server) without the slot, and takes one again before the
   * request goes on. Without a slot (uncounted, finished) it just runs `work`.
   */
  async outside<T>(work: () => Promise<T>): Promise<T> {
    if (this.phase !== 'running') return work();
    this.phase = 'outside';
    this.stopTimer();
    this.queue.release(this.key);
    this.work.elsewhere++;
    try {
      return await work();
    } finally {
      this.work.elsewhere--;
      await new Promise<void>((resolve) => {
        if (this.phase !== 'outside') return resolve(); // the client went away meanwhile
        this.phase = 'waiting';
        this.resume = resolve;
        this.afterOutside = true;
        // An address with too many waiting goes on uncounted: what the other server said is not thrown away.
        if (!this.queue.admit(this.key, this.start)) {
          this.phase = 'uncounted';
          resolve();
        }
      });
    }
  }

  /** The response is finished or its client went away: the slot (or the place in line) is given back. */
  finish(): void {
    this.stopTimer();
    if (this.phase === 'running') this.queue.release(this.key);
    else if (this.phase === 'waiting') this.queue.cancel(this.key, this.start);
    this.phase = 'finished';
    const resume = this.resume;
    this.resume = null;
    // A request waiting for its slot again after another server answered finishes its work
    // uncounted; one that never started does not start.
    if (resume && this.afterOutside) resume();
  }

  private readonly start = (): void => {
    if (this.phase !== 'waiting') {
      this.queue.release(this.key); // given a slot it no longer wants
      return;
    }
    this.phase = 'running';
    this.timer = setTimeout(() => {
      this.timer = null;
      if (this.phase === 'running') {
        this.phase = 'uncounted';
        this.queue.release(this.key);
      }
    }, this.queue.holdMs);
    this.timer.unref();
    const resume = this.resume;
    this.resume = null;
    resume?.();
  };

  private stopTimer(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }
}

/** Runs `work` (a request to another server) with the request's sign-in slot given back meanwhile. */
export function outsideSignInSlot<T>(req: Request, work: () => Promise<T>): Promise<T> {
  const slot = maybeStateOf(req)?.signInSlot;
  return slot ? slot.outside(work) : work();
}

/**
 * Reads a request's body with `read` (a body-parsing middleware) with its sign-in slot given back
 * meanwhile, so a slow upload holds no slot; resolves with the reader's error, if any. (A reader
 * that answers the request itself never resolves; the slot is already given back.)
 */
export function readBodyOutsideSignInSlot(req: Request, res: Response, read: RequestHandler): Promise<unknown> {
  return outsideSignInSlot(req, () => new Promise<unknown>((resolve) => read(req, res, (err?: unknown) => resolve(err))));
}

/**
 * Stage: a request under `/oidc` or `/sso` waits for a sign-in slot of `work` (per client
 * address) before its work, and gives it back when its response is finished.
 */
export function signInWorkStage(work: SignInWork): RequestHandler {
  return (req: Request, res: Response, next: NextFunction) => {
    if (!isSignInPath(req.path)) return next();
    const state = stateOf(req);
    const slot = new SignInSlot(work, state.clientIp(req) ?? '');
    state.signInSlot = slot;
    res.once('close', () => slot.finish());
    if (!slot.enter(() => next())) {
      slot.finish();
      state.signInSlot = null;
      next(new ApiError('unavailable', `Too many sign-in requests from this address are waiting (${work.queue.maxWaitingPerCaller}); retry later.`, {}, { 'Retry-After': '1' }));
    }
  };
}
