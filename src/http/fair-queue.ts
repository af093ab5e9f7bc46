/**
 * Fairness between callers (docs/operations.md, "Fairness between callers"). At most `slots`
 * requests do their database work at once — the pool's size, so no request waits in the pool's
 * own first-come queue behind another caller's flood. The last free slot goes only to a caller
 * holding none, so one caller never holds them all. When no slot is free, a request waits
 * in its caller's queue, and each freed slot goes to the next caller in turn (round robin), one
 * request each: a caller with 32 connections open gets one turn per round like a caller with one.
 * A lone caller uses every slot but that last one. A request that holds
 * its slot longer than `holdMs` (an export, a stalled mail server) gives it back and finishes
 * outside the count, so slow requests can delay others by that much at most, never block them.
 */
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { ApiError } from '../errors';
import { stateOf } from './request-state';

export class FairQueue {
  private running = 0;
  /** Running requests per caller (callers with none are absent). */
  private readonly runningOf = new Map<string, number>();
  /** Waiting requests per caller; the Map's insertion order is the turn order. */
  private readonly waiting = new Map<string, Array<() => void>>();

  constructor(
    readonly slots: number,
    /** How many requests one caller may have waiting; beyond it the request is refused. */
    readonly maxWaitingPerCaller: number,
    /** How long a request holds its slot at most. */
    readonly holdMs: number,
    /**
     * Whether the last free slot waits for a caller holding none (the API's requests, which may
     * wait on a lock). Off, one caller may hold every slot: for work that never waits on a lock
     * and whose callers share an address (sign-ins from one office, ./sign-in-work.ts).
     */
    readonly reserveLastSlot = true,
  ) {
    if (!(slots >= 1)) throw new Error('FairQueue needs at least one slot');
  }

  /** Runs `start` now, or queues it for `key`'s turn; false when `key` already has too many waiting. */
  admit(key: string, start: () => void): boolean {
    if (this.waiting.size === 0 && this.mayStart(key)) {
      this.begin(key, start);
      return true;
    }
    const queue = this.waiting.get(key);
    if (queue) {
      if (queue.length >= this.maxWaitingPerCaller) return false;
      queue.push(start);
    } else {
      this.waiting.set(key, [start]);
    }
    this.drain();
    return true;
  }

  /** A started request of `key` has finished: its slot goes to the next caller in turn. */
  release(key: string): void {
    this.running--;
    const n = (this.runningOf.get(key) ?? 1) - 1;
    if (n > 0) this.runningOf.set(key, n);
    else this.runningOf.delete(key);
    this.drain();
  }

  /** A waiting request went away (its client closed the connection): it never starts. */
  cancel(key: string, start: () => void): void {
    const queue = this.waiting.get(key);
    if (!queue) return;
    const i = queue.indexOf(start);
    if (i < 0) return;
    queue.splice(i, 1);
    if (queue.length === 0) this.waiting.delete(key);
  }

  /** Requests started and not yet finished, and requests waiting. */
  get load(): { running: number; waiting: number } {
    let waiting = 0;
    for (const q of this.waiting.values()) waiting += q.length;
    return { running: this.running, waiting };
  }

  /**
   * Whether `key` may take a slot now. The last free slot goes only to a caller holding none: a
   * caller whose requests wait on a lock or a slow statement can never hold every slot, so
   * another caller always finds one.
   */
  private mayStart(key: string): boolean {
    const free = this.slots - this.running;
    return free > 1 || (free === 1 && (!this.reserveLastSlot || this.slots === 1 || !this.runningOf.has(key)));
  }

  private begin(key: string, start: () => void): void {
    this.running++;
    this.runningOf.set(key, (this.runningOf.get(key) ?? 0) + 1);
    start();
  }

  private drain(): void {
    while (this.running < this.slots && this.waiting.size > 0) {
      // The first caller in line that may take a slot now.
      let chosen: [string, Array<() => void>] | null = null;
      for (const entry of this.waiting) {
        if (this.mayStart(entry[0])) {
          chosen = entry;
          break;
        }
      }
      if (!chosen) return;
      const [key, queue] = chosen;
      const start = queue.shift()!;
      // The caller goes to the back of the line, with what it still has waiting.
      this.waiting.delete(key);
      if (queue.length > 0) this.waiting.set(key, queue);
      this.begin(key, start);
    }
  }
}

/**
 * Stage: every operation but the public ones (probes, key set, the contract) takes a slot of
 * `queue` for the rest of the request, per caller (issuer and subject; the client address for a
 * caller without a token). Runs after the body is read and validated, so a slow upload never
 * holds a slot.
 */
export function fairnessStage(queue: FairQueue): RequestHandler {
  return (req: Request, res: Response, next: NextFunction) => {
    const state = stateOf(req);
    if (state.operation?.access === 'public') return next();
    const key = state.caller ? `${state.caller.issuer}\u0000${state.caller.subject}` : `address\u0000${state.clientIp(req) ?? ''}`;
    let phase: 'waiting' | 'running' | 'finished' = 'waiting';
    let timer: NodeJS.Timeout | null = null;
    const done = () => {
      if (timer) clearTimeout(timer);
      if (phase === 'running') queue.release(key);
      else if (phase === 'waiting') queue.cancel(key, start);
      phase = 'finished';
    };
    function start() {
      if (phase !== 'waiting') return;
      phase = 'running';
      timer = setTimeout(() => {
        // Still running: the slot goes to the next caller; this request finishes uncounted.
        timer = null;
        if (phase === 'running') {
          phase = 'finished';
          queue.release(key);
        }
      }, queue.holdMs);
      timer.unref();
      next();
    }
    res.once('close', done);
    if (!queue.admit(key, start)) {
      phase = 'finished';
      next(new ApiError('unavailable', `Too many requests of this caller are waiting (${queue.maxWaitingPerCaller}); retry later.`, {}, { 'Retry-After': '1' }));
    }
  };
}
