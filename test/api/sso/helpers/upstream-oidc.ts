/**
 * A tenant's identity provider for tests: oidc-provider 9 in-process on a spare port, with one
 * confidential client (client_secret_basic, PKCE required) whose redirect URI is the service's
 * /sso/oidc/callback. Its login "page" signs in whoever `person` names, at once; consent is
 * granted (the grant is made on the spot), so a browser goes authorize → callback in redirects.
 */
import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { upstreamProvider } from '../../../../bench/scenarios/upstream-idp';

export interface Person {
  sub: string;
  email: string;
  email_verified: boolean;
  name: string;
}

export interface UpstreamOidc {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** Who signs in next. */
  person: Person;
  /** The login_hint of the last authorization request. */
  lastLoginHint: string | null;
  /** While set, code exchanges wait for it at the token endpoint (a slow identity provider). */
  tokenEndpointHeld: Promise<void> | null;
  /** Code exchanges waiting at the token endpoint now. */
  tokenRequestsWaiting: number;
  close(): Promise<void>;
}

export async function startUpstreamOidc(redirectUri: string): Promise<UpstreamOidc> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const clientId = `app-${crypto.randomBytes(4).toString('hex')}`;
  const clientSecret = crypto.randomBytes(24).toString('base64url');
  const up: UpstreamOidc = {
    issuer,
    clientId,
    clientSecret,
    person: { sub: 'upstream-1', email: 'Ann@Acme.test', email_verified: true, name: 'Ann' },
    lastLoginHint: null,
    tokenEndpointHeld: null,
    tokenRequestsWaiting: 0,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
  const provider = await upstreamProvider({ issuer, clientId, clientSecret, redirectUri, claimsOf: () => ({ ...up.person }) });
  const callback = provider.callback();
  server.on('request', (req, res) => {
    const hint = new URL(req.url ?? '/', issuer).searchParams.get('login_hint');
    if (hint !== null) up.lastLoginHint = hint;
    const held = up.tokenEndpointHeld;
    if (held && req.url === '/token') {
      up.tokenRequestsWaiting++;
      void held.then(() => {
        up.tokenRequestsWaiting--;
        callback(req, res);
      });
      return;
    }
    if (!req.url?.startsWith('/interaction/')) return callback(req, res);
    provider
      .interactionFinished(req, res, { login: { accountId: up.person.sub } }, { mergeWithLastSubmission: false })
      .catch((err: Error) => res.writeHead(500).end(err.message));
  });
  return up;
}
