/**
 * Refusals of unread bodies, answered late past a budget (docs/operations.md, "Refused uploads").
 *
 * A request refused before its body was read (no token, an operation that takes no body, a body
 * over 1 MiB) is answered and its connection closed, so the body is never read. Each such
 * refusal still costs a connection: its accept, the first read (up to 64 KiB, copied into
 * memory), the answer and the close. A client that posts large bodies without a token as fast
 * as it is answered makes the instance do that hundreds of times a second, and every other
 * caller's requests wait behind it.
 *
 * So each client address (an IPv6 client's /56, as the rate limits count it) gets a budget of
 * such refusals (`FREE_PER_SECOND`, with a burst of as many); past it, the refusal is answered
 * `DELAY_MS` later, with the connection left unread meanwhile: the client's own TCP window stops
 * its upload, and a client that waits for its answer before sending again (as every HTTP/1.1
 * connection does) sends at most one upload per `DELAY_MS` per connection. Holding is bounded: at most `HELD_PER_ADDRESS` connections of one address and
 * `HELD_TOTAL` in all are held at once; past that, refusals are answered at once, as without the
 * budget. Requests that are answered normally, refusals whose body was read, and the 5xx answers
 * of the instance's own failures never wait here.
 */
import type { Request } from 'express';
import { ipKeyGenerator } from 'express-rate-limit';

/** Refusals of unread bodies an address may have per second before they are answered late. */
export const FREE_PER_SECOND = 10;
/** How late a refusal past the budget is answered. */
export const DELAY_MS = 250;
/** Connections of one address held at once; past it, refusals are answered at once. */
export const HELD_PER_ADDRESS = 32;
/** Connections held at once in all. */
export const HELD_TOTAL = 256;
/** Addresses remembered; past it, the one seen longest ago with nothing held is forgotten. */
export const MAX_ADDRESSES = 10_000;

interface Budget {
  /** Refusals left at `at` (ms, the clock of `now`). */
  tokens: number;
  at: number;
  /** Connections of this address held now. */
  held: number;
}

/** The clock (ms) and the timer a RefusalDelay uses; tests pass their own. */
export interface RefusalClock {
  now(): number;
  /** Runs `fn` after `ms`; the returned function cancels it. */
  later(fn: () => void, ms: number): () => void;
}

const realClock: RefusalClock = {
  now: () => performance.now(),
  later: (fn, ms) => {
    const timer = setTimeout(fn, ms);
    return () => clearTimeout(timer);
  },
};

export class RefusalDelay {
  private readonly budgets = new Map<string, Budget>();
  private heldTotal = 0;

  constructor(readonly clock: RefusalClock = realClock) {}

  /** Connections held now, in all. */
  get held(): number {
    return this.heldTotal;
  }

  /** Addresses remembered now. */
  get addresses(): number {
    return this.budgets.size;
  }

  /**
   * Counts one refusal of an unread body from `address`: true when it must be held (the caller
   * then calls `release(address)` once it is answered or gone), false to answer at once.
   */
  hold(address: string): boolean {
    const t = this.clock.now();
    let budget = this.budgets.get(address);
    if (budget) {
      // Seen again: moved to the back of the forgetting order.
      this.budgets.delete(address);
      budget.tokens = Math.min(FREE_PER_SECOND, budget.tokens + ((t - budget.at) / 1000) * FREE_PER_SECOND);
      budget.at = t;
    } else {
      this.forgetOne();
      budget = { tokens: FREE_PER_SECOND, at: t, held: 0 };
    }
    this.budgets.set(address, budget);
    if (budget.tokens >= 1) {
      budget.tokens -= 1;
      return false;
    }
    if (budget.held >= HELD_PER_ADDRESS || this.heldTotal >= HELD_TOTAL) return false;
    budget.held++;
    this.heldTotal++;
    return true;
  }

  /** One held connection of `address` was answered or went away. */
  release(address: string): void {
    const budget = this.budgets.get(address);
    if (!budget || budget.held === 0) return;
    budget.held--;
    this.heldTotal--;
  }

  /** Makes room for one more address: forgets the one seen longest ago that holds nothing. */
  private forgetOne(): void {
    if (this.budgets.size < MAX_ADDRESSES) return;
    for (const [address, budget] of this.budgets) {
      if (budget.held === 0) {
        this.budgets.delete(address);
        return;
      }
    }
  }
}

/** The budget an address spends: its own, or for IPv6 its /56's, as the rate limits count it. */
export function budgetKey(ip: string | null | undefined): string {
  return ip ? ipKeyGenerator(ip) : 'unknown';
}

/**
 * Sends a refusal of an unread body (`send`) at once, or `DELAY_MS` later when the client's
 * address is past its budget (then answers true). While held the connection is not read; a
 * client that goes away meanwhile is not answered.
 */
export function answerRefusal(delay: RefusalDelay, req: Request, ip: string | null | undefined, send: () => void): boolean {
  const address = budgetKey(ip);
  if (!delay.hold(address)) {
    send();
    return false;
  }
  const socket = req.socket;
  socket.pause();
  const gone = () => {
    cancel();
    delay.release(address);
  };
  const cancel = delay.clock.later(() => {
    socket.off('close', gone);
    delay.release(address);
    if (socket.destroyed) return;
    try {
      send();
    } catch {
      // Outside express's handling now: an answer that cannot be written ends the connection
      // rather than the process.
      socket.destroy();
    }
  }, DELAY_MS);
  socket.once('close', gone);
  return true;
}
