/**
 * src/http/caller-turns.ts: requests run one per turn of the event loop, callers in turn, so a
 * caller with a backlog never runs twice ahead of another caller's waiting request (a caller
 * alone in line runs a few per turn, a caller with nothing waiting goes first); a request's
 * own promises settle before the next turn; a closed connection costs no turn; a caller's
 * backlog is bounded; the probes never wait; a known token's person is one caller, an unknown
 * token counts as its address.
 */
import type { NextFunction, Request } from 'express';
import pino from 'pino';
import type { AppServices } from '../../src/context/app-services';
import type { Caller } from '../../src/context/claims';
import type { ContractOperation } from '../../src/http/contract';
import { ALONE_AFTER_MS, CallerTurns, callerTurnsStage, neverWaiting, turnKey } from '../../src/http/caller-turns';
import { attachState, RequestState } from '../../src/http/request-state';

const services = { logger: pino({ level: 'silent' }) } as unknown as AppServices;

function request(opts: { method?: string; path?: string; token?: string; ip?: string; destroyed?: boolean } = {}): Request {
  const req = {
    method: opts.method ?? 'GET',
    path: opts.path ?? '/api/tenant/decision',
    ip: opts.ip ?? '10.0.0.1',
    headers: opts.token ? { authorization: `Bearer ${opts.token}` } : {},
    socket: { destroyed: opts.destroyed ?? false },
  } as unknown as Request;
  attachState(req, new RequestState('r', services.logger, services, 0n));
  return req;
}

const KNOWN: Record<string, Caller> = {
  'alice-1': { issuer: 'https://idp.example', subject: 'alice' } as Caller,
  'alice-2': { issuer: 'https://idp.example', subject: 'alice' } as Caller,
  'bob-1': { issuer: 'https://idp.example', subject: 'bob' } as Caller,
};
const knownCaller = (req: Pick<Request, 'headers'>): Caller | null => {
  const h = req.headers.authorization;
  return typeof h === 'string' ? (KNOWN[h.slice('Bearer '.length)] ?? null) : null;
};

/** Resolves after the turns scheduled so far (and those they schedule) have run. */
async function settle(turns: CallerTurns): Promise<void> {
  while (turns.size > 0) await new Promise((r) => setImmediate(r));
  await new Promise((r) => setImmediate(r));
}

describe('turns', () => {
  it("runs callers in turn, one request each, whatever a caller's backlog", async () => {
    const turns = new CallerTurns(100);
    const ran: string[] = [];
    const add = (key: string, label: string) => turns.enqueue(key, { req: request(), next: (() => ran.push(label)) as NextFunction });
    for (let i = 0; i < 5; i++) add('flood', `flood${i}`);
    add('quiet', 'quiet0');
    add('other', 'other0');
    add('quiet', 'quiet1');
    expect(ran).toEqual([]); // nothing runs in the turn that queued it
    await settle(turns);
    expect(ran).toEqual(['flood0', 'quiet0', 'other0', 'flood1', 'quiet1', 'flood2', 'flood3', 'flood4']);
  });

  it('runs one request per turn of the event loop, its promises settled before the next starts', async () => {
    const turns = new CallerTurns(100);
    const log: string[] = [];
    for (const key of ['a', 'b']) {
      turns.enqueue(key, {
        req: request(),
        next: (() => {
          log.push(`${key} start`);
          void Promise.resolve()
            .then(() => undefined)
            .then(() => log.push(`${key} end`));
        }) as NextFunction,
      });
    }
    await new Promise((r) => setImmediate(r));
    expect(log).toEqual(['a start', 'a end']);
    await settle(turns);
    expect(log).toEqual(['a start', 'a end', 'b start', 'b end']);
  });

  it('lets a caller alone in line run up to 4 requests in its turn', async () => {
    const turns = new CallerTurns(100);
    const ran: string[] = [];
    for (let i = 0; i < 6; i++) turns.enqueue('lone', { req: request(), next: (() => ran.push(`lone${i}`)) as NextFunction });
    await new Promise((r) => setImmediate(r));
    expect(ran).toHaveLength(4);
    turns.enqueue('quiet', { req: request(), next: (() => ran.push('quiet0')) as NextFunction });
    await settle(turns);
    // The newcomer first (its line was empty), then one request each per turn.
    expect(ran.slice(4)).toEqual(['quiet0', 'lone4', 'lone5']);
  });

  it("runs a lone caller one per turn for 50 ms after another caller's request, then four again", async () => {
    let clock = 1_000;
    const turns = new CallerTurns(100, () => clock);
    const ran: string[] = [];
    const turn = () => new Promise((r) => setImmediate(r));
    for (let i = 0; i < 12; i++) turns.enqueue('lone', { req: request(), next: (() => ran.push(`lone${i}`)) as NextFunction });
    await turn();
    expect(ran).toHaveLength(4);
    turns.enqueue('quiet', { req: request(), next: (() => ran.push('quiet0')) as NextFunction });
    await turn();
    expect(ran.slice(4)).toEqual(['quiet0']);
    await turn();
    await turn();
    expect(ran.slice(5)).toEqual(['lone4', 'lone5']); // alone in line again, but not for 50 ms yet
    clock += ALONE_AFTER_MS;
    await turn();
    expect(ran.slice(7)).toEqual(['lone6', 'lone7', 'lone8', 'lone9']);
  });

  it('runs a caller with nothing waiting before the callers with a backlog, for one request', async () => {
    const turns = new CallerTurns(100);
    const ran: string[] = [];
    const add = (key: string, label: string) => turns.enqueue(key, { req: request(), next: (() => ran.push(label)) as NextFunction });
    for (let i = 0; i < 4; i++) add('flood', `flood${i}`);
    add('busy', 'busy0');
    add('busy', 'busy1');
    await new Promise((r) => setImmediate(r)); // flood0 (first come)
    await new Promise((r) => setImmediate(r)); // busy0; both have a backlog now
    expect(ran).toEqual(['flood0', 'busy0']);
    add('quiet', 'quiet0');
    add('quiet', 'quiet1'); // a second request while the first waits: no longer sparse after its turn
    add('other', 'other0');
    await settle(turns);
    expect(ran).toEqual(['flood0', 'busy0', 'quiet0', 'other0', 'flood1', 'busy1', 'quiet1', 'flood2', 'flood3']);
  });

  it('a request that throws is handed its error, and the rest of its batch still runs', async () => {
    const turns = new CallerTurns(100);
    const seen: unknown[] = [];
    turns.enqueue('lone', {
      req: request(),
      next: ((err?: unknown) => {
        if (err === undefined) throw new Error('stage failed');
        seen.push(err);
      }) as NextFunction,
    });
    turns.enqueue('lone', { req: request(), next: (() => seen.push('second ran')) as NextFunction });
    await settle(turns);
    expect(seen).toEqual([expect.objectContaining({ message: 'stage failed' }), 'second ran']);
  });

  it('drops a waiting request whose client went away, without spending a turn on it', async () => {
    const turns = new CallerTurns(100);
    const ran: string[] = [];
    turns.enqueue('a', { req: request({ destroyed: true }), next: (() => ran.push('gone')) as NextFunction });
    turns.enqueue('a', { req: request(), next: (() => ran.push('a1')) as NextFunction });
    await new Promise((r) => setImmediate(r));
    expect(ran).toEqual(['a1']);
  });

  it("refuses a caller's request beyond its waiting bound, not another caller's", () => {
    const turns = new CallerTurns(2);
    const next = (() => undefined) as NextFunction;
    expect(turns.enqueue('flood', { req: request(), next })).toBe(true);
    expect(turns.enqueue('flood', { req: request(), next })).toBe(true);
    expect(turns.enqueue('flood', { req: request(), next })).toBe(false);
    expect(turns.enqueue('quiet', { req: request(), next })).toBe(true);
  });
});

describe('whose turn', () => {
  it("is a known token's person (several tokens, one person), else the client address", () => {
    expect(turnKey(request({ token: 'alice-1' }), knownCaller)).toBe(turnKey(request({ token: 'alice-2', ip: '10.9.9.9' }), knownCaller));
    expect(turnKey(request({ token: 'alice-1' }), knownCaller)).not.toBe(turnKey(request({ token: 'bob-1' }), knownCaller));
    // Unknown or forged tokens from one address share that address's turn, like no token.
    const forged = ['x.y.z', 'a.b.c'].map((token) => turnKey(request({ token, ip: '10.0.0.7' }), knownCaller));
    expect(new Set([...forged, turnKey(request({ ip: '10.0.0.7' }), knownCaller)]).size).toBe(1);
    expect(turnKey(request({ ip: '10.0.0.8' }), knownCaller)).not.toBe(forged[0]);
  });
});

describe('the stage', () => {
  const op = (method: string, path: string, access: ContractOperation['access'], rateLimit: unknown) => ({ operationId: path, method, path, access, rateLimit }) as unknown as ContractOperation;
  const exempt = neverWaiting([
    op('GET', '/healthz', 'public', null),
    op('GET', '/.well-known/jwks.json', 'public', null),
    op('POST', '/api/registrations', 'public', { counter: 'register' }),
    op('GET', '/api/tenant/decision', 'tenantMember', { counter: 'decision' }),
    op('GET', '/api/public/{id}', 'public', null),
  ]);

  it('lets the probes and the key set through at once; everything else waits for its turn', async () => {
    expect([...exempt].sort()).toEqual(['GET /.well-known/jwks.json', 'GET /healthz']);
    const turns = new CallerTurns(10);
    const stage = callerTurnsStage(turns, knownCaller, exempt);
    const ran: string[] = [];
    stage(request({ path: '/healthz' }), {} as never, () => ran.push('probe'));
    stage(request({ method: 'HEAD', path: '/healthz' }), {} as never, () => ran.push('head probe'));
    stage(request({ path: '/api/tenant/decision', token: 'bob-1' }), {} as never, () => ran.push('decision'));
    expect(ran).toEqual(['probe', 'head probe']);
    await settle(turns);
    expect(ran).toEqual(['probe', 'head probe', 'decision']);
  });

  it('answers 503 with Retry-After when the caller already has too many waiting', () => {
    const stage = callerTurnsStage(new CallerTurns(1), knownCaller, exempt);
    const outcomes: unknown[] = [];
    stage(request({ token: 'alice-1' }), {} as never, (err?: unknown) => outcomes.push(err ?? 'ran'));
    stage(request({ token: 'alice-2' }), {} as never, (err?: unknown) => outcomes.push(err ?? 'ran'));
    expect(outcomes).toHaveLength(1);
    expect(outcomes[0]).toMatchObject({ status: 503, headers: { 'Retry-After': '1' } });
  });
});
