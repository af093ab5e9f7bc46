/**
 * src/http/fair-queue.ts: a lone caller uses every slot; when slots are taken, freed slots go to
 * the waiting callers in turn, one request each, whatever their backlog; a closed connection
 * leaves the line; a caller's backlog is bounded; a request holding its slot too long gives it
 * back, and finishing later does not free a second slot.
 */
import { EventEmitter } from 'node:events';
import type { Request, Response } from 'express';
import pino from 'pino';
import type { AppServices } from '../../src/context/app-services';
import type { ContractOperation } from '../../src/http/contract';
import { FairQueue, fairnessStage } from '../../src/http/fair-queue';
import { attachState, RequestState } from '../../src/http/request-state';

function tracker(queue: FairQueue) {
  const started: string[] = [];
  const admit = (key: string, label = key) => queue.admit(key, () => started.push(label));
  return { started, admit };
}

it('lets a lone caller use every slot but the last, then queues; the last goes to a caller holding none', () => {
  const q = new FairQueue(3, 10, 100);
  const { started, admit } = tracker(q);
  for (let i = 0; i < 5; i++) admit('flood', `flood${i}`);
  expect(started).toEqual(['flood0', 'flood1']);
  expect(q.load).toEqual({ running: 2, waiting: 3 });
  // Another caller finds the last slot at once, though flood waited first.
  admit('quiet', 'quiet0');
  expect(started).toEqual(['flood0', 'flood1', 'quiet0']);
  // flood0 done: flood still holds one, so the one free slot stays free…
  q.release('flood');
  expect(started.at(-1)).toBe('quiet0');
  // …until quiet's is done too: then flood takes all but the last again.
  q.release('quiet');
  expect(started.at(-1)).toBe('flood2');
  expect(q.load).toEqual({ running: 2, waiting: 2 });
});

it('never lets one caller hold every slot while its requests are slow', () => {
  const q = new FairQueue(4, 100, 100);
  const { started, admit } = tracker(q);
  for (let i = 0; i < 8; i++) admit('directory', `directory${i}`);
  expect(started).toHaveLength(3);
  admit('quiet', 'quiet0');
  admit('other', 'other0');
  expect(started.slice(3)).toEqual(['quiet0']);
  q.release('quiet');
  expect(started.at(-1)).toBe('other0');
});

it('with one slot, a caller alone takes it', () => {
  const q = new FairQueue(1, 10, 100);
  const { started, admit } = tracker(q);
  admit('a');
  expect(started).toEqual(['a']);
});

it('gives freed slots to the waiting callers in turn, one request each', () => {
  const q = new FairQueue(2, 100, 100);
  const { started, admit } = tracker(q);
  for (let i = 0; i < 6; i++) admit('flood', `flood${i}`);
  expect(started).toEqual(['flood0']); // the last slot is kept for a caller holding none
  admit('quiet', 'quiet0');
  admit('other', 'other0');
  admit('quiet', 'quiet1');
  expect(started).toEqual(['flood0', 'quiet0']);
  q.release('flood');
  q.release('quiet');
  q.release('flood');
  q.release('other');
  // flood waited first; then other and quiet each get their turn before flood's next one.
  expect(started.slice(2)).toEqual(['flood1', 'other0', 'quiet1', 'flood2']);
});

it('starts nothing ahead of a waiting caller while slots are full', () => {
  const q = new FairQueue(1, 10, 100);
  const { started, admit } = tracker(q);
  admit('a');
  admit('b');
  q.release('a');
  admit('c', 'c');
  expect(started).toEqual(['a', 'b']);
  q.release('b');
  expect(started).toEqual(['a', 'b', 'c']);
});

it('drops a waiting request whose client went away', () => {
  const q = new FairQueue(1, 10, 100);
  const started: string[] = [];
  q.admit('a', () => started.push('a'));
  const gone = () => started.push('gone');
  q.admit('b', gone);
  q.admit('c', () => started.push('c'));
  q.cancel('b', gone);
  q.cancel('b', gone); // twice: no effect
  q.release('a');
  expect(started).toEqual(['a', 'c']);
  expect(q.load).toEqual({ running: 1, waiting: 0 });
});

it("refuses a caller's request beyond its waiting bound, not another caller's", () => {
  const q = new FairQueue(1, 2, 100);
  const { admit } = tracker(q);
  expect(admit('flood')).toBe(true); // running
  expect(admit('flood')).toBe(true);
  expect(admit('flood')).toBe(true);
  expect(admit('flood')).toBe(false);
  expect(admit('quiet')).toBe(true);
});

describe('the stage', () => {
  const services = { logger: pino({ level: 'silent' }) } as unknown as AppServices;
  const op = (access: ContractOperation['access']) => ({ operationId: 'x', method: 'GET', path: '/x', access, rateLimit: 'api', takesBody: false }) as unknown as ContractOperation;

  function call(stage: ReturnType<typeof fairnessStage>, subject: string | null, access: ContractOperation['access'] = 'tenantMember') {
    const req = { ip: '127.0.0.1' } as Request;
    const state = new RequestState('r', services.logger, services, 0n);
    state.operation = op(access);
    state.caller = subject === null ? null : ({ issuer: 'https://idp.example', subject } as RequestState['caller']);
    attachState(req, state);
    const res = new EventEmitter() as unknown as Response;
    const outcome: { started: boolean; error: unknown } = { started: false, error: undefined };
    stage(req, res, (err?: unknown) => {
      if (err) outcome.error = err;
      else outcome.started = true;
    });
    return { outcome, close: () => (res as unknown as EventEmitter).emit('close') };
  }

  it('takes a slot per request until the response closes; public operations take none', () => {
    const queue = new FairQueue(1, 10, 10_000);
    const stage = fairnessStage(queue);
    const first = call(stage, 'alice');
    const probe = call(stage, null, 'public');
    const second = call(stage, 'bob');
    expect([first.outcome.started, probe.outcome.started, second.outcome.started]).toEqual([true, true, false]);
    first.close();
    expect(second.outcome.started).toBe(true);
    second.close();
    first.close(); // a second close frees nothing more
    expect(queue.load).toEqual({ running: 0, waiting: 0 });
  });

  it('answers 503 with Retry-After when the caller already has too many waiting', () => {
    const stage = fairnessStage(new FairQueue(1, 1, 10_000));
    call(stage, 'flood');
    call(stage, 'flood');
    const refused = call(stage, 'flood');
    expect(refused.outcome.started).toBe(false);
    expect(refused.outcome.error).toMatchObject({ status: 503, headers: { 'Retry-After': '1' } });
  });

  it('gives the slot back when a request holds it too long, and frees it only once', () => {
    jest.useFakeTimers();
    try {
      const queue = new FairQueue(1, 10, 20);
      const stage = fairnessStage(queue);
      const slow = call(stage, 'exporter');
      const next = call(stage, 'alice');
      jest.advanceTimersByTime(19);
      expect(next.outcome.started).toBe(false);
      jest.advanceTimersByTime(1);
      expect(next.outcome.started).toBe(true);
      slow.close(); // the slow one ends later: alice still holds the only slot
      const third = call(stage, 'bob');
      expect(third.outcome.started).toBe(false);
      next.close();
      expect(third.outcome.started).toBe(true);
    } finally {
      jest.useRealTimers();
    }
  });
});
