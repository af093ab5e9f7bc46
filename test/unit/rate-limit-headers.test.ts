/**
 * src/http/rate-limit-headers.ts writes the headers express-rate-limit's own `legacyHeaders: true`
 * and `standardHeaders: 'draft-8'` write, value for value: the same limiter counts the same key in
 * two express apps, one letting the library write its headers, one writing them with ours, and
 * every rate-limit header of every answer is compared (the clock frozen, so `t=` and the reset
 * agree), through the window's last request and past it, for several keys.
 */
import express, { type NextFunction, type Request, type Response } from 'express';
import { rateLimit, type AugmentedRequest } from 'express-rate-limit';
import request from 'supertest';
import { partitionKey, rateLimitHeaders } from '../../src/http/rate-limit-headers';

const HEADERS = ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset', 'ratelimit', 'ratelimit-policy'];
const WINDOW_MS = 60_000;
const LIMIT = 3;

function app(ours: boolean) {
  const a = express();
  const headers = rateLimitHeaders('decision', LIMIT, WINDOW_MS);
  const limiter = rateLimit({
    windowMs: WINDOW_MS,
    limit: LIMIT,
    identifier: 'decision',
    standardHeaders: ours ? false : 'draft-8',
    legacyHeaders: !ours,
    keyGenerator: (req: Request) => `caller:${JSON.stringify(['https://idp.example', String(req.query.who)])}`,
    handler: (req: Request, res: Response) => {
      if (ours) headers.set(res, (req as AugmentedRequest).rateLimit);
      res.status(429).json({ limited: true });
    },
  });
  a.use((req: Request, res: Response, next: NextFunction) =>
    limiter(req, res, (err?: unknown) => {
      if (ours && err === undefined) headers.set(res, (req as AugmentedRequest).rateLimit);
      next(err);
    }),
  );
  a.get('/', (_req, res) => res.json({ ok: true }));
  return a;
}

describe('rate-limit headers', () => {
  beforeAll(() => {
    // Only Date is frozen (sockets and timers stay real), a second before a window of whole seconds would end.
    jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate', 'clearImmediate', 'setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'queueMicrotask', 'hrtime', 'performance'], now: new Date('2026-11-26T12:00:00.250Z') });
  });
  afterAll(() => jest.useRealTimers());

  it('are the library own draft-8 and legacy headers, for every answer and key', async () => {
    const library = app(false);
    const ours = app(true);
    for (const who of ['alice', 'bob', 'ünïcode subject']) {
      for (let i = 0; i < LIMIT + 2; i++) {
        const [a, b] = await Promise.all([request(library).get('/').query({ who }), request(ours).get('/').query({ who })]);
        expect(b.status).toBe(a.status);
        expect(a.status).toBe(i < LIMIT ? 200 : 429);
        for (const h of HEADERS) {
          expect(a.headers[h]).toBeDefined();
          expect([h, b.headers[h]]).toEqual([h, a.headers[h]]);
        }
      }
    }
  });

  it('names a partition per key, the library formula', () => {
    expect(partitionKey('caller:["a","b"]')).not.toBe(partitionKey('caller:["a","c"]'));
    expect(partitionKey('ip:127.0.0.1')).toMatch(/^[A-Za-z0-9+/=]{16}$/);
  });
});
