/**
 * src/http/sign-in-work.ts: requests under /oidc and /sso take one of a few sign-in slots, one
 * address may take them all, a request gives its slot back while it waits for another server and
 * takes one again before going on, a client gone away frees its slot once, a full line answers
 * 503, a slot held too long is given back; and over real HTTP, a request waiting for another
 * server lets the next sign-in request run while one doing its work makes it wait.
 */
import { EventEmitter } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express, { type Request, type Response } from 'express';
import pino from 'pino';
import type { AppServices } from '../../src/context/app-services';
import { attachState, RequestState, requestStateStage } from '../../src/http/request-state';
import { isSignInPath, outsideSignInSlot, readBodyOutsideSignInSlot, SignInWork, signInWorkStage } from '../../src/http/sign-in-work';

const logger = pino({ level: 'silent' });
const services = { logger } as unknown as AppServices;

function call(stage: ReturnType<typeof signInWorkStage>, path: string, ip = '203.0.113.7') {
  const req = { path, ip } as unknown as Request;
  attachState(req, new RequestState('r', logger, services, 0n));
  const res = new EventEmitter() as unknown as Response;
  const outcome: { started: boolean; error: unknown } = { started: false, error: undefined };
  stage(req, res, (err?: unknown) => {
    if (err) outcome.error = err;
    else outcome.started = true;
  });
  return { req, outcome, close: () => (res as unknown as EventEmitter).emit('close') };
}

const tick = () => new Promise<void>((resolve) => setImmediate(resolve));

it('takes slots for the provider and the SSO routes only', () => {
  expect(['/oidc', '/oidc/auth', '/oidc/token', '/sso/oidc/callback', '/sso/saml/x/acs'].every(isSignInPath)).toBe(true);
  expect(['/oidcx', '/api/tenant/decision', '/sso', '/ssox/a', '/console'].some(isSignInPath)).toBe(false);
  const queue = new SignInWork(1, 10, 10_000);
  const stage = signInWorkStage(queue);
  const first = call(stage, '/oidc/auth');
  const decision = call(stage, '/api/tenant/decision');
  expect([first.outcome.started, decision.outcome.started]).toEqual([true, true]);
  expect(queue.load).toEqual({ working: 1, waiting: 0, elsewhere: 0 });
});

it('lets one address take every slot, then queues; a closed request frees its slot once', () => {
  const queue = new SignInWork(2, 10, 10_000);
  const stage = signInWorkStage(queue);
  const [a, b, c] = [call(stage, '/oidc/auth'), call(stage, '/oidc/token'), call(stage, '/sso/oidc/callback')];
  expect([a.outcome.started, b.outcome.started, c.outcome.started]).toEqual([true, true, false]);
  a.close();
  expect(c.outcome.started).toBe(true);
  a.close();
  expect(queue.load).toEqual({ working: 2, waiting: 0, elsewhere: 0 });
  b.close();
  c.close();
  expect(queue.load).toEqual({ working: 0, waiting: 0, elsewhere: 0 });
});

it('gives the slot back while the request waits for another server, and takes one again before going on', async () => {
  const queue = new SignInWork(1, 10, 10_000);
  const stage = signInWorkStage(queue);
  const callback = call(stage, '/sso/oidc/callback');
  let answer!: (v: string) => void;
  let resumed = false;
  const away = outsideSignInSlot(callback.req, () => new Promise<string>((resolve) => (answer = resolve))).then((v) => ((resumed = true), v));
  // Away: the next request gets the slot.
  expect(queue.load).toEqual({ working: 0, waiting: 0, elsewhere: 1 });
  const page = call(stage, '/oidc/auth');
  expect(page.outcome.started).toBe(true);
  // The other server answers while the page holds the slot: the callback waits for it.
  answer('tokens');
  await tick();
  expect(resumed).toBe(false);
  expect(queue.load).toEqual({ working: 1, waiting: 1, elsewhere: 0 });
  page.close();
  await expect(away).resolves.toBe('tokens');
  expect(queue.load).toEqual({ working: 1, waiting: 0, elsewhere: 0 });
  callback.close();
  expect(queue.load).toEqual({ working: 0, waiting: 0, elsewhere: 0 });
});

it('lets the work finish uncounted when the client went away, and frees nothing twice', async () => {
  const queue = new SignInWork(1, 10, 10_000);
  const stage = signInWorkStage(queue);
  // Gone while the other server answers.
  const first = call(stage, '/sso/oidc/callback');
  let answer!: () => void;
  const away = outsideSignInSlot(first.req, () => new Promise<void>((resolve) => (answer = resolve)));
  first.close();
  answer();
  await away;
  expect(queue.load).toEqual({ working: 0, waiting: 0, elsewhere: 0 });
  // Gone while waiting for a slot again after the other server answered.
  const holder = call(stage, '/oidc/auth');
  const second = call(stage, '/sso/oidc/callback');
  expect(second.outcome.started).toBe(false);
  holder.close();
  expect(second.outcome.started).toBe(true);
  const third = call(stage, '/oidc/token');
  let answer2!: () => void;
  const away2 = outsideSignInSlot(second.req, () => new Promise<void>((resolve) => (answer2 = resolve)));
  expect(third.outcome.started).toBe(true);
  answer2();
  await tick();
  second.close(); // waiting for its slot again: its work goes on, uncounted
  await away2;
  expect(queue.load).toEqual({ working: 1, waiting: 0, elsewhere: 0 });
  third.close();
  expect(queue.load).toEqual({ working: 0, waiting: 0, elsewhere: 0 });
  // Gone before its first slot: it never starts.
  const busy = call(stage, '/oidc/auth');
  const never = call(stage, '/oidc/auth');
  never.close();
  busy.close();
  expect(never.outcome.started).toBe(false);
  expect(queue.load).toEqual({ working: 0, waiting: 0, elsewhere: 0 });
});

it('answers 503 with Retry-After when the address already has too many waiting', () => {
  const stage = signInWorkStage(new SignInWork(1, 1, 10_000));
  call(stage, '/oidc/auth');
  call(stage, '/oidc/auth');
  const refused = call(stage, '/oidc/auth');
  expect(refused.outcome.started).toBe(false);
  expect(refused.outcome.error).toMatchObject({ status: 503, headers: { 'Retry-After': '1' } });
});

it('gives the slot back when a request holds it too long; waiting for another server afterwards frees nothing more', async () => {
  jest.useFakeTimers();
  try {
    const queue = new SignInWork(1, 10, 20);
    const stage = signInWorkStage(queue);
    const slow = call(stage, '/oidc/auth');
    const next = call(stage, '/oidc/token');
    jest.advanceTimersByTime(20);
    expect(next.outcome.started).toBe(true);
    await outsideSignInSlot(slow.req, async () => 'done');
    slow.close();
    expect(queue.load).toEqual({ working: 1, waiting: 0, elsewhere: 0 });
    next.close();
    expect(queue.load).toEqual({ working: 0, waiting: 0, elsewhere: 0 });
  } finally {
    jest.useRealTimers();
  }
});

describe('over HTTP', () => {
  let server: http.Server;
  let base: string;
  let release: (() => void) | null = null;
  const elsewhere: Array<() => void> = [];

  const work = new SignInWork(1, 10, 60_000);

  beforeAll(async () => {
    const app = express();
    app.use(requestStateStage(services));
    app.use(signInWorkStage(work));
    // A form read with the slot given back (the SAML ACS, the sign-in pages' forms).
    const form = express.urlencoded({ extended: false });
    app.post('/sso/upload', (req, res, next) => void readBodyOutsideSignInSlot(req, res, form).then((err) => (err ? next(err) : res.send(String((req.body as Record<string, string>).a)))));
    // A callback that waits for another server (given back meanwhile), one that holds its slot.
    app.get('/sso/away', async (req, res) => res.send(await outsideSignInSlot(req, () => new Promise<string>((resolve) => elsewhere.push(() => resolve('answered'))))));
    app.get('/sso/busy', async (_req, res) => res.send(await new Promise<string>((resolve) => (release = () => resolve('done')))));
    app.get('/oidc/page', (_req, res) => res.send('page'));
    server = http.createServer(app);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('answers another sign-in request while one waits for another server, and makes it wait behind one doing its work', async () => {
    const away = fetch(`${base}/sso/away`);
    while (elsewhere.length === 0) await tick();
    expect(await (await fetch(`${base}/oidc/page`)).text()).toBe('page');
    elsewhere.shift()!();
    expect(await (await away).text()).toBe('answered');

    const busy = fetch(`${base}/sso/busy`);
    while (release === null) await tick();
    let pageDone = false;
    const page = fetch(`${base}/oidc/page`).then(async (r) => ((pageDone = true), r.text()));
    // A fixed pause only before checking that something did not happen.
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(pageDone).toBe(false);
    release();
    expect(await (await busy).text()).toBe('done');
    expect(await page).toBe('page');
  });

  it('reads a slow upload with the slot given back', async () => {
    const upload = http.request(`${base}/sso/upload`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', 'content-length': '7' } });
    const answered = new Promise<string>((resolve, reject) => {
      upload.on('response', (r) => {
        let text = '';
        r.on('data', (c: Buffer) => (text += c.toString()));
        r.on('end', () => resolve(text));
      });
      upload.on('error', reject);
    });
    upload.write('a=');
    while (work.load.elsewhere === 0) await tick();
    expect(work.load).toEqual({ working: 0, waiting: 0, elsewhere: 1 });
    expect(await (await fetch(`${base}/oidc/page`)).text()).toBe('page');
    upload.end('12345');
    expect(await answered).toBe('12345');
    while (work.load.working > 0) await tick(); // the server's 'close' of that response
    expect(work.load).toEqual({ working: 0, waiting: 0, elsewhere: 0 });
  });
});
