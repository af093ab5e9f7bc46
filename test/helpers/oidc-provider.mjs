// A real OpenID provider (oidc-provider, ESM-only, so a child process of the test) on a spare
// port. argv[2] is JSON: { "<client_id>": { <extra access-token claims> } }; each client gets
// client-credentials tokens (JWT, RS256) carrying its claims. Prints {"issuer": …} once listening.
//
// argv[3], optional, is JSON: { "client_id": …, "redirect_uris": […], "post_logout_redirect_uris": […] },
// a public browser client (the console): authorization code with PKCE (S256, required), no client
// secret, CORS for its origin, and the provider's development login and consent pages (any login
// name, any password). Asking for the resource urn:tenant-api gets it a JWT access token too, and
// a refresh token comes with it; "access_token_ttl" (seconds) shortens its access tokens' life.
import crypto from 'node:crypto';
import http from 'node:http';
import Provider from 'oidc-provider';

const claimsByClient = JSON.parse(process.argv[2] ?? '{}');
const browserClient = process.argv[3] ? JSON.parse(process.argv[3]) : null;
const { privateKey } = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
const jwk = { ...privateKey.export({ format: 'jwk' }), kid: crypto.randomBytes(8).toString('hex'), alg: 'RS256', use: 'sig' };
const RESOURCE = 'urn:tenant-api';

const server = http.createServer();
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const issuer = `http://127.0.0.1:${server.address().port}`;

const provider = new Provider(issuer, {
  jwks: { keys: [jwk] },
  cookies: { keys: [crypto.randomBytes(32).toString('hex')] },
  clients: [
    ...Object.keys(claimsByClient).map((client_id) => ({
      client_id,
      client_secret: 'test-secret',
      grant_types: ['client_credentials'],
      redirect_uris: [],
      response_types: [],
    })),
    ...(browserClient
      ? [
          {
            client_id: browserClient.client_id,
            token_endpoint_auth_method: 'none',
            application_type: 'web',
            grant_types: ['authorization_code', 'refresh_token'],
            response_types: ['code'],
            redirect_uris: browserClient.redirect_uris,
            post_logout_redirect_uris: browserClient.post_logout_redirect_uris ?? [],
          },
        ]
      : []),
  ],
  pkce: { methods: ['S256'], required: () => true },
  // A refresh token for the browser client without asking for offline_access (as Keycloak does).
  issueRefreshToken: (_ctx, client) => client.grantTypeAllowed('refresh_token'),
  clientBasedCORS: (_ctx, origin, client) => client.redirectUris.some((u) => new URL(u).origin === origin),
  features: {
    devInteractions: { enabled: browserClient !== null },
    clientCredentials: { enabled: true },
    resourceIndicators: {
      enabled: true,
      defaultResource: () => RESOURCE,
      getResourceServerInfo: (_ctx, _resource, client) => ({
        scope: 'api',
        audience: RESOURCE,
        accessTokenFormat: 'jwt',
        jwt: { sign: { alg: 'RS256' } },
        ...(browserClient?.access_token_ttl && client.clientId === browserClient.client_id ? { accessTokenTTL: browserClient.access_token_ttl } : {}),
      }),
    },
  },
  extraTokenClaims: (_ctx, token) => claimsByClient[token.clientId] ?? {},
});
server.on('request', provider.callback());
process.stdout.write(`${JSON.stringify({ issuer })}\n`);
process.on('SIGTERM', () => server.close(() => process.exit(0)));
