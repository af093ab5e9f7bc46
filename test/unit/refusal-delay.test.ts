/**
 * src/http/refusal-delay.ts: each address has a budget of refusals of unread bodies per second;
 * past it a refusal is held, within a cap per address and in all; held connections are released
 * when answered or gone; the table of addresses is bounded.
 */
import { EventEmitter } from 'node:events';
import type { Request } from 'express';
import {
  answerRefusal,
  DELAY_MS,
  FREE_PER_SECOND,
  HELD_PER_ADDRESS,
  HELD_TOTAL,
  MAX_ADDRESSES,
  RefusalDelay,
  budgetKey,
  type RefusalClock,
} from '../../src/http/refusal-delay';

/** A clock the test moves by hand; `later` is never called by RefusalDelay itself. */
function manualClock(): RefusalClock & { t: number } {
  const clock = {
    t: 0,
    now: () => clock.t,
    later: () => () => undefined,
  };
  return clock;
}

/** Spends an address's whole budget, checking every refusal in it is answered at once. */
function spend(delay: RefusalDelay, address: string): void {
  for (let i = 0; i < FREE_PER_SECOND; i++) expect(delay.hold(address)).toBe(false);
}

describe('RefusalDelay', () => {
  it('answers an address at once within its budget, then holds', () => {
    const delay = new RefusalDelay(manualClock());
    spend(delay, '198.51.100.1');
    expect(delay.hold('198.51.100.1')).toBe(true);
    expect(delay.held).toBe(1);
    // Another address has its own budget.
    expect(delay.hold('198.51.100.2')).toBe(false);
    delay.release('198.51.100.1');
    expect(delay.held).toBe(0);
  });

  it('the budget refills at its rate, up to its burst', () => {
    const clock = manualClock();
    const delay = new RefusalDelay(clock);
    spend(delay, 'a');
    expect(delay.hold('a')).toBe(true);
    delay.release('a');
    // Half a second gives back half the budget.
    clock.t += 500;
    for (let i = 0; i < FREE_PER_SECOND / 2; i++) expect(delay.hold('a')).toBe(false);
    expect(delay.hold('a')).toBe(true);
    delay.release('a');
    // A long quiet time gives back the burst, not more.
    clock.t += 60_000;
    spend(delay, 'a');
    expect(delay.hold('a')).toBe(true);
  });

  it('holds at most HELD_PER_ADDRESS connections of one address; past it, answers at once', () => {
    const delay = new RefusalDelay(manualClock());
    spend(delay, 'a');
    for (let i = 0; i < HELD_PER_ADDRESS; i++) expect(delay.hold('a')).toBe(true);
    expect(delay.hold('a')).toBe(false);
    expect(delay.held).toBe(HELD_PER_ADDRESS);
    delay.release('a');
    expect(delay.hold('a')).toBe(true);
  });

  it('holds at most HELD_TOTAL connections in all', () => {
    const delay = new RefusalDelay(manualClock());
    let held = 0;
    for (let n = 0; held < HELD_TOTAL; n++) {
      const address = `10.0.${n >> 8}.${n & 255}`;
      spend(delay, address);
      for (let i = 0; i < HELD_PER_ADDRESS && held < HELD_TOTAL; i++) {
        expect(delay.hold(address)).toBe(true);
        held++;
      }
    }
    spend(delay, 'another');
    expect(delay.hold('another')).toBe(false);
    expect(delay.held).toBe(HELD_TOTAL);
  });

  it('a release without a hold changes nothing', () => {
    const delay = new RefusalDelay(manualClock());
    delay.release('never-seen');
    spend(delay, 'a');
    delay.release('a');
    expect(delay.held).toBe(0);
    expect(delay.hold('a')).toBe(true);
    expect(delay.held).toBe(1);
  });

  it('remembers at most MAX_ADDRESSES addresses, forgetting first the one seen longest ago that holds nothing', () => {
    const delay = new RefusalDelay(manualClock());
    spend(delay, 'holding');
    expect(delay.hold('holding')).toBe(true);
    spend(delay, 'spent');
    for (let n = 0; n < MAX_ADDRESSES + 10; n++) delay.hold(`addr-${n}`);
    expect(delay.addresses).toBe(MAX_ADDRESSES);
    // The address that holds a connection is still known (its release still counts) ...
    delay.release('holding');
    expect(delay.held).toBe(0);
    // ... and the one that only spent its budget was forgotten: it starts with a full budget.
    expect(delay.hold('spent')).toBe(false);
  });

  it("an IPv6 client spends its /56's budget, as the rate limits count it; IPv4 addresses their own", () => {
    expect(budgetKey('2001:db8:0:1::1')).toBe(budgetKey('2001:db8:0:ff:1234::9'));
    expect(budgetKey('2001:db8:0:1::1')).not.toBe(budgetKey('2001:db8:0:100::1'));
    expect(budgetKey('198.51.100.1')).not.toBe(budgetKey('198.51.100.2'));
    expect(budgetKey(null)).toBe(budgetKey(undefined));
  });

  describe('answerRefusal', () => {
    /** A clock whose timers the test fires, and a socket that records what was done to it. */
    function setup() {
      const timers: Array<{ fn: () => void; ms: number; cancelled: boolean }> = [];
      const clock: RefusalClock = {
        now: () => 0,
        later: (fn, ms) => {
          const timer = { fn, ms, cancelled: false };
          timers.push(timer);
          return () => {
            timer.cancelled = true;
          };
        },
      };
      const delay = new RefusalDelay(clock);
      spend(delay, budgetKey('198.51.100.7'));
      const socket = Object.assign(new EventEmitter(), { destroyed: false, paused: false, pause: () => (socket.paused = true), destroy: () => (socket.destroyed = true) });
      const req = { socket } as unknown as Request;
      return { timers, delay, socket, req };
    }

    it('holds the connection unread and answers when the delay has passed', () => {
      const { timers, delay, socket, req } = setup();
      let sent = 0;
      expect(answerRefusal(delay, req, '198.51.100.7', () => sent++)).toBe(true);
      expect(socket.paused).toBe(true);
      expect(timers.map((x) => x.ms)).toEqual([DELAY_MS]);
      expect(sent).toBe(0);
      timers[0]!.fn();
      expect(sent).toBe(1);
      expect(delay.held).toBe(0);
    });

    it('a connection closed while held is released and never answered', () => {
      const { timers, delay, socket, req } = setup();
      let sent = 0;
      answerRefusal(delay, req, '198.51.100.7', () => sent++);
      socket.destroyed = true;
      socket.emit('close');
      expect(delay.held).toBe(0);
      expect(timers[0]!.cancelled).toBe(true);
      expect(sent).toBe(0);
    });

    it('an answer that throws when the delay has passed ends the connection, not the process', () => {
      const { timers, delay, socket, req } = setup();
      answerRefusal(delay, req, '198.51.100.7', () => {
        throw new Error('cannot write');
      });
      expect(() => timers[0]!.fn()).not.toThrow();
      expect(socket.destroyed).toBe(true);
      expect(delay.held).toBe(0);
    });
  });
});
