/**
 * A tenant's identity provider for the sign-in bench, in its own process (forked by
 * ./sign-in.ts), so its CPU is not the service's: oidc-provider 9 on a spare loopback port with
 * one confidential client whose redirect URI is the service's /sso/oidc/callback. Its "login"
 * signs in at once the person the authorization request's `login_hint` names (`<sub>@…`), and
 * consent is granted on the spot, as a company IdP does for a user already signed in to it.
 * Sends `{ issuer, clientId, clientSecret }` to its parent once listening; exits on 'stop'.
 */
import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** What both upstream IdPs share (this bench's and the tests'): a signing key, one confidential client. */
export interface UpstreamIdpSetup {
  readonly issuer: string;
  readonly clientId: string;
  readonly clientSecret: string;
  readonly redirectUri: string;
  /** The claims of the person signed in as `sub`. */
  readonly claimsOf: (sub: string) => Record<string, unknown>;
}

/**
 * oidc-provider 9 as a company IdP: client_secret_basic, PKCE required, `openid email profile`
 * granted on the spot (no consent page), interactions at `/interaction/<uid>` for the caller to
 * answer with `interactionFinished`.
 */
export async function upstreamProvider(setup: UpstreamIdpSetup) {
  const { default: Provider } = await import('oidc-provider');
  const { privateKey } = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
  const jwk = { ...privateKey.export({ format: 'jwk' }), kid: crypto.randomBytes(8).toString('hex'), alg: 'RS256', use: 'sig' };
  return new Provider(setup.issuer, {
    jwks: { keys: [jwk as never] },
    cookies: { keys: [crypto.randomBytes(32).toString('hex')] },
    clients: [{ client_id: setup.clientId, client_secret: setup.clientSecret, redirect_uris: [setup.redirectUri], grant_types: ['authorization_code'], response_types: ['code'], token_endpoint_auth_method: 'client_secret_basic' }],
    pkce: { required: () => true },
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'] },
    findAccount: async (_ctx, sub) => ({ accountId: sub, claims: async () => ({ ...setup.claimsOf(sub), sub }) }),
    features: { devInteractions: { enabled: false } },
    interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
    loadExistingGrant: async (ctx) => {
      const grant = new ctx.oidc.provider.Grant({ clientId: ctx.oidc.client!.clientId, accountId: ctx.oidc.session!.accountId! });
      grant.addOIDCScope('openid email profile');
      await grant.save();
      return grant;
    },
  });
}

async function main(redirectUri: string): Promise<void> {
  const server = http.createServer();
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const clientId = 'bench-service';
  const clientSecret = crypto.randomBytes(24).toString('base64url');
  const provider = await upstreamProvider({ issuer, clientId, clientSecret, redirectUri, claimsOf: (sub) => ({ email: `${sub}@signin-bench.test`, email_verified: true, name: sub }) });
  const callback = provider.callback();
  server.on('request', (req, res) => {
    if (!req.url?.startsWith('/interaction/')) return callback(req, res);
    provider
      .interactionDetails(req, res)
      .then((details) => {
        const hint = typeof details.params.login_hint === 'string' ? details.params.login_hint : 'anonymous@x';
        return provider.interactionFinished(req, res, { login: { accountId: hint.split('@')[0]! } }, { mergeWithLastSubmission: false });
      })
      .catch((err: Error) => res.writeHead(500).end(err.message));
  });
  process.send!({ issuer, clientId, clientSecret });
  process.on('message', (m) => {
    if (m === 'stop') server.close(() => process.exit(0));
  });
}

if (require.main === module) {
  main(process.argv[2]!).catch((err: unknown) => {
    process.stderr.write(`upstream IdP failed: ${String(err)}\n`);
    process.exit(1);
  });
}
