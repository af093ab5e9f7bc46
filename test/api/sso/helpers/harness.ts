/**
 * The service on a real port for SSO tests: SERVICE_PUBLIC_URL is its own address, so identity
 * providers redirect a browser back to its /sso routes. The `SignInCompleter` here stands in for
 * the provider's half of sign-in (src/oidc): it records what the SSO code handed it and answers
 * 200 (completed) or 400 (failed). `GET /test/start` calls the real `SsoConnector.start`.
 * `Browser` is a fetch that keeps cookies per origin and follows redirects.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import request from 'supertest';
import type { FederatedFailure, SignInCompleter, UpstreamIdentity } from '../../../../src/context/sign-in';
import { createSso } from '../../../../src/sso';
import { startTestApp, type TestApp } from '../../../helpers/app';
import { adminToken, createUser, tokenFor, unique } from '../../../helpers/factories';

export interface Recorded {
  completed: Array<{ interactionUid: string; identity: UpstreamIdentity }>;
  failed: Array<{ interactionUid: string | null; failure: FederatedFailure }>;
}

export interface SsoHarness {
  t: TestApp;
  base: string;
  recorded: Recorded;
  close(): Promise<void>;
}

export async function startSsoHarness(env: Record<string, string | undefined> = {}): Promise<SsoHarness> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const recorded: Recorded = { completed: [], failed: [] };
  const completer: SignInCompleter = {
    async completeFederated(_req, res, interactionUid, identity) {
      recorded.completed.push({ interactionUid, identity });
      res.status(200).json({ completed: interactionUid });
    },
    async failFederated(_req, res, interactionUid, failure) {
      recorded.failed.push({ interactionUid, failure });
      res.status(400).json({ failed: failure.reason });
    },
  };
  const t = await startTestApp(
    { SERVICE_MULTI_TENANT_MODE: 'true', SERVICE_PUBLIC_URL: base, SERVICE_SSO_ALLOW_PRIVATE_NETWORKS: 'true', ...env },
    { signInCompleter: completer },
  );
  // The sign-in pages' instance: its router is not mounted (the app's own serves /sso), but building
  // it registers the completer, through which a start that cannot proceed answers.
  const sso = createSso(t.config, t.services);
  sso.router(completer);
  const starter = express();
  starter.get('/test/start', async (req, res) => {
    try {
      await sso.connector.start(res, String(req.query.connection), { interactionUid: String(req.query.interaction), loginHint: (req.query.login_hint as string | undefined) ?? null });
    } catch (err) {
      res.status(418).json({ error: (err as Error).name, reason: (err as { failure?: FederatedFailure }).failure?.reason ?? null });
    }
  });
  server.on('request', (req, res) => (req.url?.startsWith('/test/') ? starter(req, res) : t.app(req, res)));
  return {
    t,
    base,
    recorded,
    async close() {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await t.close();
    },
  };
}

/** A tenant and its admin's Authorization header. */
export async function tenantAdmin(t: TestApp): Promise<{ id: string; slug: string; auth: string }> {
  const slug = unique('sso');
  const r = await request(t.app).post('/api/setup/tenant').set('Authorization', `Bearer ${adminToken()}`).send({ name: slug, slug }).expect(201);
  const a = await createUser(r.body.tenant_id, { role: 'admin' });
  return { id: r.body.tenant_id, slug, auth: `Bearer ${tokenFor({ sub: a.subject, claims: { tenant: slug } })}` };
}

/** A browser: cookies per origin, redirects followed (at most 20), every hop kept. */
export class Browser {
  private readonly jar = new Map<string, Map<string, string>>();
  readonly hops: string[] = [];

  async fetch(url: string, init: { method?: string; body?: string; headers?: Record<string, string> } = {}): Promise<Response> {
    let current = url;
    let method = init.method ?? 'GET';
    let body = init.body;
    let headers = init.headers ?? {};
    for (let i = 0; i < 20; i++) {
      this.hops.push(current);
      const origin = new URL(current).origin;
      const cookies = [...(this.jar.get(origin) ?? new Map()).entries()].map(([k, v]) => `${k}=${v}`).join('; ');
      const res = await fetch(current, { method, body, headers: { ...headers, ...(cookies ? { cookie: cookies } : {}) }, redirect: 'manual' });
      for (const c of res.headers.getSetCookie()) {
        const [pair] = c.split(';');
        const eq = pair!.indexOf('=');
        const m = this.jar.get(origin) ?? new Map<string, string>();
        m.set(pair!.slice(0, eq).trim(), pair!.slice(eq + 1).trim());
        this.jar.set(origin, m);
      }
      const location = res.headers.get('location');
      if (res.status < 300 || res.status >= 400 || !location) return res;
      current = new URL(location, current).href;
      method = 'GET';
      body = undefined;
      headers = {};
    }
    throw new Error(`too many redirects: ${this.hops.join(' → ')}`);
  }
}

/** The Location of a start (without following it). */
export async function startLocation(base: string, connectionId: string, interaction: string, loginHint?: string): Promise<string> {
  const q = new URLSearchParams({ connection: connectionId, interaction, ...(loginHint ? { login_hint: loginHint } : {}) });
  const res = await fetch(`${base}/test/start?${q}`, { redirect: 'manual' });
  if (res.status !== 303) throw new Error(`start answered ${res.status}: ${await res.text()}`);
  return res.headers.get('location')!;
}
