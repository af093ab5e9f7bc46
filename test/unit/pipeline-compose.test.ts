/**
 * src/http/pipeline.ts: stages run in order as one middleware; next(err), a thrown error and a
 * rejected promise all reach the error stage once; the end of the stages goes on to express.
 */
import type { ErrorRequestHandler, NextFunction, Request, RequestHandler, Response } from 'express';
import { pipeline } from '../../src/http/pipeline';

const req = {} as Request;
const res = {} as Response;

function run(stages: RequestHandler[], onError?: ErrorRequestHandler): Promise<{ trail: string[]; done: unknown[] }> {
  const trail: string[] = [];
  const errorStage: ErrorRequestHandler =
    onError ??
    ((err: unknown) => {
      trail.push(`error:${(err as Error).message}`);
    });
  return new Promise((resolve) => {
    const done: unknown[] = [];
    const finish: NextFunction = (err?: unknown) => {
      done.push(err);
    };
    pipeline(
      stages.map((s, i) => (q: Request, r: Response, n: NextFunction) => {
        trail.push(`stage${i}`);
        return s(q, r, n);
      }),
      errorStage,
    )(req, res, finish);
    setTimeout(() => resolve({ trail, done }), 20);
  });
}

const pass: RequestHandler = (_q, _r, n) => n();

it('runs the stages in order and then hands over to express', async () => {
  const { trail, done } = await run([pass, pass, pass]);
  expect(trail).toEqual(['stage0', 'stage1', 'stage2']);
  expect(done).toEqual([undefined]);
});

it('stops at a stage that answers (does not call next)', async () => {
  const { trail, done } = await run([pass, () => undefined, pass]);
  expect(trail).toEqual(['stage0', 'stage1']);
  expect(done).toEqual([]);
});

it.each([
  ['next(err)', ((_q, _r, n) => n(new Error('boom'))) as RequestHandler],
  ['a thrown error', (() => {
    throw new Error('boom');
  }) as RequestHandler],
  ['a rejected promise', (async () => {
    throw new Error('boom');
  }) as RequestHandler],
  ['a rejection after next()', (async (_q: Request, _r: Response, n: NextFunction) => {
    await Promise.resolve();
    n(new Error('boom'));
  }) as RequestHandler],
])('sends %s to the error stage once and skips the rest', async (_name, failing) => {
  const { trail, done } = await run([pass, failing, pass]);
  expect(trail).toEqual(['stage0', 'stage1', 'error:boom']);
  expect(done).toEqual([]);
});

it("passes an error of the error stage itself to express's final handler", async () => {
  const { done } = await run([(_q, _r, n) => n(new Error('first'))], () => {
    throw new Error('second');
  });
  expect(done.map((e) => (e as Error).message)).toEqual(['second']);
});

it('next("route") continues and next("router") leaves the pipeline', async () => {
  expect((await run([(_q, _r, n) => n('route'), pass])).trail).toEqual(['stage0', 'stage1']);
  const out = await run([(_q, _r, n) => n('router'), pass]);
  expect(out.trail).toEqual(['stage0']);
  expect(out.done).toEqual([undefined]);
});
