/**
 * The stages of src/http run as one express middleware: each stage is an ordinary
 * `(req, res, next)` function, called in order; `next(err)` (or a rejected promise) goes to the
 * error stage. The same contract as registering each with `app.use`, without express's router
 * walking a layer (path match, parameter processing, prefix trimming) for each of a dozen
 * stages on every request.
 */
import type { ErrorRequestHandler, NextFunction, Request, RequestHandler, Response } from 'express';

export function pipeline(stages: readonly RequestHandler[], onError: ErrorRequestHandler): RequestHandler {
  const count = stages.length;
  return (req: Request, res: Response, done: NextFunction) => {
    let index = 0;
    let failed = false;
    const fail = (err: unknown) => {
      // An error raised after the error stage ran (or by it) goes to express's final handler.
      if (failed) return done(err);
      failed = true;
      try {
        const r = onError(err, req, res, done) as unknown;
        if (r instanceof Promise) r.catch(done);
      } catch (e) {
        done(e);
      }
    };
    const next: NextFunction = (err?: unknown) => {
      if (err === 'router') return done();
      if (err !== undefined && err !== null && err !== 'route') return fail(err);
      if (index >= count) return done();
      const stage = stages[index++]!;
      try {
        const r = stage(req, res, next) as unknown;
        if (r instanceof Promise) r.catch(fail);
      } catch (e) {
        fail(e);
      }
    };
    next();
  };
}
