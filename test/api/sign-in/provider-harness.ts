/**
 * The provider's tests' harness: the real app on a real port (SERVICE_PUBLIC_URL set to it), the
 * product's client (openid-client 6) over HTTP, a cookie jar for the browser's part, and an
 * interaction router that ends each interaction with `finishSignIn` for the account the test
 * chose (the sign-in pages are not under test here; the protocol is).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import express from 'express';
import type { Knex } from 'knex';
import { createApp } from '../../../src/app';
import { buildServices, closeServices } from '../../../src/build-services';
import { loadConfig, type Config } from '../../../src/config';
import type { AppServices } from '../../../src/context/app-services';
import { openDatabase } from '../../../src/db/database';
import { withService } from '../../../src/db/tenant-scope';
import { createClient } from '../../../src/domain/sign-in/clients';
import { createLogger } from '../../../src/logger';
import type { InteractionRouterFactory, SignInChoice } from '../../../src/oidc';
import { testEnv } from '../../helpers/app';
import { closeOwnerConnection, ownerConnection, unique } from '../../helpers/factories';

type OpenIdClient = typeof import('openid-client');
let oc: Promise<OpenIdClient> | null = null;
export function openidClient(): Promise<OpenIdClient> {
  oc ??= import('openid-client');
  return oc;
}

/** What the harness's interaction router signs the next person in as. */
export interface Harness {
  choose: ((details: { uid: string; params: Record<string, unknown> }) => SignInChoice) | null;
  interactions: number;
}

export interface ProviderApp {
  /** The app's request listener (attached to its own server unless one was given). */
  app: express.Express;
  base: string;
  issuer: string;
  config: Config;
  services: AppServices;
  db: Knex;
  harness: Harness;
  logs: Array<Record<string, unknown>>;
  close(): Promise<void>;
}

function harnessRouter(h: Harness): InteractionRouterFactory {
  return (oidc) => {
    const router = express.Router();
    router.get('/:uid', async (req, res, next) => {
      try {
        const details = await oidc.interactionDetails(req, res);
        h.interactions += 1;
        if (!h.choose) throw new Error('the test chose nobody to sign in');
        await oidc.finishSignIn(req, res, h.choose({ uid: details.uid, params: details.params as Record<string, unknown> }));
      } catch (err) {
        next(err);
      }
    });
    return router;
  };
}

/** Starts the app on a port of its own; `base` may be given to make a second instance answer for the same URL. */
export async function startProviderApp(env: Record<string, string | undefined> = {}, opts: { server?: http.Server } = {}): Promise<ProviderApp> {
  const server = opts.server ?? http.createServer();
  if (!opts.server) await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const config = loadConfig(testEnv({ SERVICE_PUBLIC_URL: base, SERVICE_MULTI_TENANT_MODE: 'true', ...env }));
  const logs: Array<Record<string, unknown>> = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, cb) {
      for (const line of chunk.toString('utf8').split('\n')) if (line.trim()) logs.push(JSON.parse(line) as Record<string, unknown>);
      cb();
    },
  });
  const logger = createLogger(config.logLevel, sink);
  const db = openDatabase({ url: config.databaseUrl!, poolMax: 5, logger, preparedStatements: config.databasePreparedStatements });
  const harness: Harness = { choose: null, interactions: 0 };
  const services: AppServices = { ...(await buildServices(config, { db, logger })), oidcInteractions: harnessRouter(harness) };
  const app = await createApp(config, services);
  if (!opts.server) server.on('request', app);
  return {
    app,
    base,
    issuer: `${base}/oidc`,
    config,
    services,
    db,
    harness,
    logs,
    async close() {
      if (!opts.server) await new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections?.();
      await closeServices(services);
      await db.destroy();
    },
  };
}

/** Registers a client (public unless a type is given) with a loopback redirect URI. */
export async function registerClient(p: ProviderApp, type: 'public' | 'confidential' = 'public', extra: { post_logout_redirect_uris?: string[] } = {}) {
  const redirectUri = `http://127.0.0.1:9/${unique('cb')}`;
  const { client, clientSecret } = await withService(p.db, (trx) =>
    createClient(trx, p.config, { name: unique('app'), type, redirect_uris: [redirectUri], post_logout_redirect_uris: extra.post_logout_redirect_uris ?? [] }),
  );
  return { clientId: client.client_id, clientSecret, redirectUri };
}

/** An account (a person who signs in through the provider). */
export async function createAccount(opts: { email?: string; name?: string } = {}): Promise<{ id: string; email: string; name: string }> {
  const email = opts.email ?? `${unique('person')}@example.test`;
  const name = opts.name ?? 'Pat Example';
  const [row] = (await ownerConnection()('sign_in_accounts').insert({ email, email_verified: true, name }).returning(['id'])) as Array<{ id: string }>;
  return { id: row!.id, email, name };
}

/** A browser's cookies, by name (the provider's cookies have distinct names). */
export class CookieJar {
  private readonly cookies = new Map<string, string>();
  header(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }
  take(res: Response): void {
    for (const line of res.headers.getSetCookie()) {
      const [pair, ...attrs] = line.split(';');
      const at = pair!.indexOf('=');
      const name = pair!.slice(0, at).trim();
      const value = pair!.slice(at + 1).trim();
      const expired = attrs.some((a) => /^\s*expires=/i.test(a) && Date.parse(a.split('=')[1]!) < Date.now()) || attrs.some((a) => /^\s*max-age=0/i.test(a));
      if (expired || value === '') this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }
  /** GET with the cookies, not following redirects. */
  async get(url: string | URL): Promise<Response> {
    const res = await fetch(url, { redirect: 'manual', headers: { cookie: this.header() } });
    this.take(res);
    return res;
  }
  async post(url: string | URL, form: Record<string, string>): Promise<Response> {
    const res = await fetch(url, { method: 'POST', redirect: 'manual', headers: { cookie: this.header(), 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(form).toString() });
    this.take(res);
    return res;
  }
}

/**
 * Follows the browser's redirects from `start` until one leaves for `stopAt` (the client's
 * redirect URI) or a page answers; returns that last URL or response.
 */
export async function browse(jar: CookieJar, start: string | URL, stopAt: string, max = 10): Promise<{ url: URL } | { res: Response; url: URL }> {
  let url = new URL(start);
  for (let i = 0; i < max; i++) {
    if (url.href.startsWith(stopAt)) return { url };
    const res = await jar.get(url);
    const location = res.headers.get('location');
    if (res.status < 300 || res.status >= 400 || !location) return { res, url };
    url = new URL(location, url);
  }
  throw new Error(`more than ${max} redirects from ${String(start)}`);
}

type Discovered = Awaited<ReturnType<OpenIdClient['discovery']>>;

/** The product's client configuration, by discovery (public client unless a secret is given). */
export async function discover(p: Pick<ProviderApp, 'issuer'>, clientId: string, clientSecret: string | null = null): Promise<Discovered> {
  const oidc = await openidClient();
  return oidc.discovery(new URL(p.issuer), clientId, undefined, clientSecret === null ? oidc.None() : oidc.ClientSecretBasic(clientSecret), { execute: [oidc.allowInsecureRequests] });
}

/** An authorization request's URL and the checks its answer needs. */
export async function authorizationRequest(config: Discovered, redirectUri: string, extra: Record<string, string> = {}) {
  const oidc = await openidClient();
  const verifier = oidc.randomPKCECodeVerifier();
  const state = oidc.randomState();
  const nonce = oidc.randomNonce();
  const url = oidc.buildAuthorizationUrl(config, {
    redirect_uri: redirectUri,
    scope: 'openid email profile offline_access',
    code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state,
    nonce,
    ...extra,
  });
  return { url, verifier, state, nonce };
}

/**
 * A whole sign-in of `accountId` into `tenantId` through the browser's redirects (the harness's
 * interaction router answers for the pages), then the code exchanged by the client.
 */
export async function signIn(p: ProviderApp, config: Discovered, redirectUri: string, choice: SignInChoice, jar = new CookieJar(), extra: Record<string, string> = {}) {
  const oidc = await openidClient();
  const req = await authorizationRequest(config, redirectUri, extra);
  p.harness.choose = () => choice;
  const back = await browse(jar, req.url, redirectUri);
  if ('res' in back) throw new Error(`the sign-in stopped at ${back.url.href} (${back.res.status}): ${await back.res.text()}`);
  const tokens = await oidc.authorizationCodeGrant(config, back.url, { pkceCodeVerifier: req.verifier, expectedState: req.state, expectedNonce: req.nonce });
  return { tokens, jar };
}

/** The JSON payload of a JWT, unverified. */
export function payloadOf(jwt: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(jwt.split('.')[1]!, 'base64url').toString('utf8')) as Record<string, unknown>;
}

/** The access lines of answers with a 5xx status and the provider's own error lines (none may come from a client's mistake). */
export function serverErrors(p: Pick<ProviderApp, 'logs'>): Array<Record<string, unknown>> {
  return p.logs.filter((l) => (l.msg === 'request completed' && typeof l.status === 'number' && l.status >= 500) || l.msg === 'OpenID provider error' || l.msg === 'Sign-in page failed');
}

/**
 * The provider app of a test file: started before its tests, closed after them, and the file
 * fails when the service answered a 5xx or logged a provider or page error meanwhile (none may
 * come from a client's mistake). The returned object stands for the running app.
 */
export function useProviderApp(): ProviderApp {
  let started: ProviderApp | null = null;
  beforeAll(async () => {
    started = await startProviderApp();
  });
  afterAll(async () => {
    if (!started) return;
    const failures = serverErrors(started);
    await started.close();
    await closeOwnerConnection();
    expect(failures).toEqual([]);
  });
  return new Proxy({} as ProviderApp, {
    get(_, key) {
      if (!started) throw new Error('the provider app is used before its beforeAll ran');
      return Reflect.get(started, key) as unknown;
    },
  });
}
