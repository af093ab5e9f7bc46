// A product that signs people in with tenant-service (docs/sign-in.md#add-sign-in-to-your-product):
// an express app, a confidential client of the service's OpenID provider, openid-client 6.
//
// Register the client first (its secret is shown once):
//   npx tenantctl clients create "Example" --type confidential \
//     --redirect-uri http://127.0.0.1:3000/callback --post-logout-redirect-uri http://127.0.0.1:3000/
//
// Run:  ISSUER=http://127.0.0.1:8080/oidc CLIENT_ID=… CLIENT_SECRET=… node examples/sign-in-express/server.mjs
//
// Other settings: BASE_URL (where people reach this app; default http://127.0.0.1:$PORT), PORT
// (3000), HOST (127.0.0.1). An http ISSUER is accepted for local development only.
//
// Sessions live in this process's memory, enough for an example: a real product keeps them in
// its session store (express-session with Redis, a signed cookie, …).
import crypto from 'node:crypto';
import express from 'express';
import * as client from 'openid-client';

const PORT = Number(process.env.PORT ?? 3000);
const HOST = process.env.HOST ?? '127.0.0.1';
const BASE_URL = process.env.BASE_URL ?? `http://${HOST}:${PORT}`;
const ISSUER = process.env.ISSUER;
const CLIENT_ID = process.env.CLIENT_ID;
const CLIENT_SECRET = process.env.CLIENT_SECRET;
if (!ISSUER || !CLIENT_ID || !CLIENT_SECRET) {
  process.stderr.write('Set ISSUER (<SERVICE_PUBLIC_URL>/oidc), CLIENT_ID and CLIENT_SECRET (from tenantctl clients create).\n');
  process.exit(2);
}
const REDIRECT_URI = `${BASE_URL}/callback`;

/** @type {Map<string, Record<string, any>>} session id → what the session holds */
const sessions = new Map();

/** The caller's session (made on first use), kept by an HttpOnly cookie. */
function session(req, res) {
  const sid = /(?:^|;\s*)sid=([A-Za-z0-9_-]{43})/.exec(req.headers.cookie ?? '')?.[1];
  if (sid && sessions.has(sid)) return sessions.get(sid);
  const fresh = crypto.randomBytes(32).toString('base64url');
  sessions.set(fresh, {});
  res.cookie('sid', fresh, { httpOnly: true, sameSite: 'lax', secure: BASE_URL.startsWith('https:'), path: '/' });
  return sessions.get(fresh);
}

// Discovery of the provider: its endpoints and keys. An http issuer only in local development.
const config = await client.discovery(new URL(ISSUER), CLIENT_ID, CLIENT_SECRET, undefined, ISSUER.startsWith('http:') ? { execute: [client.allowInsecureRequests] } : undefined);

const app = express();

// Sends the person to the provider; `organization` (a slug) picks the tenant, `prompt=none` never shows a page.
async function login(req, res, extra = {}) {
  const s = session(req, res);
  s.verifier = client.randomPKCECodeVerifier();
  s.state = client.randomState();
  s.nonce = client.randomNonce();
  const url = client.buildAuthorizationUrl(config, {
    redirect_uri: REDIRECT_URI,
    scope: 'openid email profile',
    code_challenge: await client.calculatePKCECodeChallenge(s.verifier),
    code_challenge_method: 'S256',
    state: s.state,
    nonce: s.nonce,
    ...extra,
  });
  res.redirect(url.href);
}

app.get('/login', (req, res, next) => login(req, res).catch(next));

app.get('/callback', async (req, res, next) => {
  const s = session(req, res);
  try {
    const tokens = await client.authorizationCodeGrant(config, new URL(req.originalUrl, BASE_URL), {
      pkceCodeVerifier: s.verifier,
      expectedState: s.state,
      expectedNonce: s.nonce,
    });
    const { sub, email, tenant_id, tenant, tenant_role, permissions } = tokens.claims();
    Object.assign(s, { user: { sub, email, tenant_id, tenant, tenant_role, permissions }, idToken: tokens.id_token, accessToken: tokens.access_token });
    res.redirect('/');
  } catch (err) {
    // A switch with prompt=none that needs a sign-in (or is not allowed) comes back as an error.
    if (err instanceof client.AuthorizationResponseError) return res.status(403).send(`Not signed in: ${err.error}`);
    next(err);
  } finally {
    delete s.verifier;
    delete s.state;
    delete s.nonce;
  }
});

// Another tenant of the same person, without a new sign-in while their session at the provider lives.
app.get('/switch/:organization', (req, res, next) => login(req, res, { organization: req.params.organization, prompt: 'none' }).catch(next));

app.get('/logout', (req, res) => {
  const s = session(req, res);
  const idToken = s.idToken;
  for (const k of Object.keys(s)) delete s[k];
  if (!idToken) return res.redirect('/');
  res.redirect(client.buildEndSessionUrl(config, { id_token_hint: idToken, post_logout_redirect_uri: `${BASE_URL}/` }).href);
});

app.get('/', (req, res) => {
  const { user } = session(req, res);
  if (!user) return res.type('text').send('Not signed in: GET /login\n');
  res.json(user);
});

app.listen(PORT, HOST, () => process.stdout.write(`example product on ${BASE_URL}\n`));
