/**
 * An OpenID provider whose answers a test writes: a real HTTP server with a discovery document,
 * a JWKS and a token endpoint that answers the ID token the test signed (with the provider's key,
 * or another) — to prove that the service refuses a token of another issuer, another audience,
 * an expired one, one with another nonce or a forged signature. The token endpoint records what
 * it was sent.
 */
import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, SignJWT, type KeyLike } from 'jose';

export interface CraftedIdp {
  issuer: string;
  /** The discovery document's fields, changeable (e.g. another `issuer`). */
  discovery: Record<string, unknown>;
  /** The next token endpoint answer's ID token. */
  nextIdToken: string | null;
  tokenRequests: Array<{ authorization: string | undefined; body: URLSearchParams }>;
  /** Signs claims (defaults: this issuer, `aud`, now, an hour) with the provider's key, or `key`. */
  sign(claims: Record<string, unknown>, key?: { privateKey: KeyLike; kid: string }): Promise<string>;
  otherKey(): { privateKey: KeyLike; kid: string };
  close(): Promise<void>;
}

export async function startCraftedIdp(clientId: string): Promise<CraftedIdp> {
  const pair = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
  const other = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
  const kid = crypto.randomBytes(6).toString('hex');
  const jwk = { ...(await exportJWK(pair.publicKey)), kid, alg: 'RS256', use: 'sig' };
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const idp: CraftedIdp = {
    issuer,
    discovery: {
      issuer,
      authorization_endpoint: `${issuer}/authorize`,
      token_endpoint: `${issuer}/token`,
      jwks_uri: `${issuer}/jwks`,
      response_types_supported: ['code'],
      subject_types_supported: ['public'],
      id_token_signing_alg_values_supported: ['RS256'],
      token_endpoint_auth_methods_supported: ['client_secret_basic'],
    },
    nextIdToken: null,
    tokenRequests: [],
    async sign(claims, key) {
      const now = Math.floor(Date.now() / 1000);
      const k = key ?? { privateKey: pair.privateKey, kid };
      return new SignJWT({ iss: issuer, aud: clientId, iat: now, exp: now + 3600, ...claims }).setProtectedHeader({ alg: 'RS256', kid: k.kid }).sign(k.privateKey);
    },
    otherKey: () => ({ privateKey: other.privateKey, kid }),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
  server.on('request', (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const json = (status: number, body: unknown) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      if (req.url === '/.well-known/openid-configuration') return json(200, idp.discovery);
      if (req.url === '/jwks') return json(200, { keys: [jwk] });
      if (req.url === '/token' && req.method === 'POST') {
        idp.tokenRequests.push({ authorization: req.headers.authorization, body: new URLSearchParams(Buffer.concat(chunks).toString('utf8')) });
        if (!idp.nextIdToken) return json(400, { error: 'invalid_grant', error_description: 'no token prepared' });
        return json(200, { access_token: 'at', token_type: 'Bearer', expires_in: 300, id_token: idp.nextIdToken });
      }
      json(404, { error: 'not_found' });
    });
  });
  return idp;
}
