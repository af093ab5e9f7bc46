/**
 * The console's sign-in with an OpenID provider, in Chromium: authorization code with PKCE
 * (oidc-client-ts) against a real provider (oidc-provider, a child process) with a public client.
 * The console asks for the resource SERVICE_CONSOLE_RESOURCE, so the access token is a JWT with
 * the audience the service checks (SERVICE_JWT_AUDIENCE). The verifier and state live in the
 * tab's sessionStorage only; signing out forgets the tokens. The provider's access tokens live
 * ACCESS_TOKEN_TTL seconds, and the console renews them with the refresh token before they expire.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import readline from 'node:readline';
import { closeOwnerConnection, createTenant, createUser, unique } from '../helpers/factories';
import { browserIt, checkPage, openConsole, startConsoleHarness, type ConsoleHarness } from '../helpers/console-browser';

const browserTest = browserIt('console-oidc.test.ts');
const CLIENT_ID = 'tenant-console';
const RESOURCE = 'urn:tenant-api';
/** oidc-client-ts announces expiry 60 s ahead: the renewal comes 15 s after the sign-in. */
const ACCESS_TOKEN_TTL = 75;
let provider: ChildProcess | undefined;
let issuer: string;
let h: ConsoleHarness;

/** Starts oidc-provider with the console as a public client redirecting to `base`. */
async function startProvider(base: string): Promise<string> {
  const client = { client_id: CLIENT_ID, redirect_uris: [`${base}/console/callback`], post_logout_redirect_uris: [`${base}/console/`], access_token_ttl: ACCESS_TOKEN_TTL };
  const child = spawn(process.execPath, [path.join(__dirname, '..', 'helpers', 'oidc-provider.mjs'), '{}', JSON.stringify(client)], { stdio: ['ignore', 'pipe', 'inherit'] });
  provider = child;
  const lines = readline.createInterface({ input: child.stdout });
  return new Promise<string>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`oidc-provider exited with ${code}`)));
    lines.once('line', (line) => resolve((JSON.parse(line) as { issuer: string }).issuer));
  });
}

beforeAll(async () => {
  h = await startConsoleHarness(async (base) => {
    issuer = await startProvider(base);
    return { SERVICE_OIDC_ISSUER: issuer, SERVICE_CONSOLE_CLIENT_ID: CLIENT_ID, SERVICE_CONSOLE_RESOURCE: RESOURCE, SERVICE_JWT_AUDIENCE: RESOURCE };
  });
}, 240_000);

afterAll(async () => {
  await h?.close();
  provider?.kill('SIGTERM');
  await closeOwnerConnection();
}, 60_000);

const storage = `JSON.stringify({ session: Object.fromEntries(Object.entries(sessionStorage)), local: Object.keys(localStorage), cookie: document.cookie })`;
interface Storage {
  session: Record<string, string>;
  local: string[];
  cookie: string;
}

browserTest(
  'Sign in at the provider, back through /console/callback to the person\'s tenants; sign-out forgets the token',
  async () => {
    const login = unique('alice');
    const tenant = await createTenant();
    await createUser(tenant.id, { subject: login, issuer, role: 'admin' });

    const tab = await openConsole(h, { allowOrigins: [issuer] });
    const { page } = tab;
    await page.getByRole('heading', { name: 'Sign in', level: 1 }).waitFor();
    await page.getByRole('heading', { name: "With your organization's sign-in", level: 2 }).waitFor();
    // The instance checks the provider's tokens: no tenantctl link to offer.
    expect(await page.getByRole('heading', { name: 'With a sign-in link from tenantctl' }).count()).toBe(0);
    await checkPage(page, 'oidc-sign-in');

    const authorize = page.waitForRequest((r) => r.url().startsWith(`${issuer}/auth?`));
    await page.getByRole('button', { name: 'Sign in' }).click();
    const url = new URL((await authorize).url());
    await page.getByPlaceholder('Enter any login').waitFor();
    expect(Object.fromEntries(url.searchParams)).toMatchObject({
      client_id: CLIENT_ID,
      response_type: 'code',
      redirect_uri: `${h.base}/console/callback`,
      scope: 'openid profile email',
      code_challenge_method: 'S256',
      resource: RESOURCE,
    });
    // Back in the console's tab, at its origin: the verifier is in sessionStorage, nothing in
    // localStorage or a cookie. Then forward again to the provider's login page.
    const state = url.searchParams.get('state')!;
    await page.goBack();
    await page.getByRole('heading', { name: 'Sign in', level: 1 }).waitFor();
    const kept = JSON.parse((await page.evaluate(storage)) as string) as Storage;
    expect(kept.local).toEqual([]);
    expect(kept.cookie).toBe('');
    const entry = JSON.parse(kept.session[`oidc.${state}`] ?? 'null') as { code_verifier?: string } | null;
    expect(typeof entry?.code_verifier).toBe('string');
    await page.goForward();

    // The provider's development login and consent pages.
    await page.getByPlaceholder('Enter any login').fill(login);
    await page.getByPlaceholder('and password').fill('any password');
    await page.getByRole('button', { name: 'Sign-in' }).click();
    await page.getByRole('button', { name: 'Continue' }).click();

    await page.getByRole('heading', { name: 'Your tenants', level: 1 }).waitFor();
    expect(page.url()).toBe(`${h.base}/console/`);
    await page.getByText(`Signed in as ${login}`, { exact: true }).waitFor();
    await page.getByRole('cell', { name: tenant.slug, exact: true }).waitFor();
    const after = JSON.parse((await page.evaluate(storage)) as string) as Storage;
    expect(after.local).toEqual([]);
    expect(after.cookie).toBe('');
    expect(Object.keys(after.session)).not.toContain(`oidc.${state}`);
    const token = after.session['tenant-service.console.token']!;
    const claims = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8')) as Record<string, unknown>;
    expect(claims).toMatchObject({ iss: issuer, sub: login, aud: RESOURCE, client_id: CLIENT_ID });
    await checkPage(page, 'oidc-signed-in');

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in', level: 1 }).waitFor();
    await page.waitForFunction(() => Object.keys(sessionStorage).length === 0);
    // oidc-provider's development login page asks for a Google font, which the tab blocks; every
    // blocked request has its own line naming its URL, so the blocks' console lines say nothing more.
    const providerFont = (p: string) => p.includes('https://fonts.googleapis.com/') || p === 'console.error: Failed to load resource: net::ERR_BLOCKED_BY_CLIENT.Inspector';
    expect(tab.problems.filter((p) => !providerFont(p))).toEqual([]);
    await tab.close();
  },
  120_000,
);

function claimsOf(token: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8')) as Record<string, unknown>;
}

browserTest(
  'before the access token expires, the refresh token renews it and the console carries on with the new one',
  async () => {
    const login = unique('renew');
    const tenant = await createTenant();
    await createUser(tenant.id, { subject: login, issuer, role: 'admin' });
    const tab = await openConsole(h, { allowOrigins: [issuer] });
    const { page } = tab;
    // Listened for from the start: a busy machine may take a while to show the first page.
    const refresh = page.waitForRequest((r) => r.url() === `${issuer}/token` && /grant_type=refresh_token/.test(r.postData() ?? ''), { timeout: 90_000 });
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByPlaceholder('Enter any login').fill(login);
    await page.getByPlaceholder('and password').fill('any password');
    await page.getByRole('button', { name: 'Sign-in' }).click();
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.getByRole('cell', { name: tenant.slug, exact: true }).waitFor();
    const first = (await page.evaluate(`sessionStorage.getItem('tenant-service.console.token')`)) as string;
    expect((claimsOf(first).exp as number) - (claimsOf(first).iat as number)).toBe(ACCESS_TOKEN_TTL);

    // The refresh grant, naming the resource again so the new token is a JWT for this service.
    const body = new URLSearchParams((await refresh).postData() ?? '');
    expect(body.get('resource')).toBe(RESOURCE);
    expect(body.get('client_id')).toBe(CLIENT_ID);
    await page.waitForFunction((old) => { const t = sessionStorage.getItem('tenant-service.console.token'); return t !== null && t !== old; }, first, { timeout: 30_000 });
    const second = (await page.evaluate(`sessionStorage.getItem('tenant-service.console.token')`)) as string;
    expect(claimsOf(second)).toMatchObject({ iss: issuer, sub: login, aud: RESOURCE });
    expect(claimsOf(second).exp as number).toBeGreaterThan(claimsOf(first).exp as number);

    // Still signed in, nothing reloaded, and the next call carries the new token.
    await page.getByText(`Signed in as ${login}`, { exact: true }).waitFor();
    const members = page.waitForRequest((r) => r.url().startsWith(`${h.base}/api/tenant/members`));
    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Members' }).click();
    expect((await members).headers()['authorization']).toBe(`Bearer ${second}`);
    await page.getByRole('heading', { name: 'Members', level: 1 }).waitFor();
    await page.getByRole('cell', { name: login, exact: true }).first().waitFor();
    const providerFont = (p: string) => p.includes('https://fonts.googleapis.com/') || p === 'console.error: Failed to load resource: net::ERR_BLOCKED_BY_CLIENT.Inspector';
    expect(tab.problems.filter((p) => !providerFont(p))).toEqual([]);
    await tab.close();
  },
  180_000,
);

browserTest(
  'a callback without a matching state says the sign-in failed and links back to the sign-in page',
  async () => {
    const tab = await openConsole(h, { path: '/callback?code=forged&state=unknown', allowOrigins: [issuer] });
    const { page } = tab;
    await page.getByRole('heading', { name: 'Sign-in failed', level: 1 }).waitFor();
    await page.getByText('The sign-in could not be completed', { exact: false }).waitFor();
    await checkPage(page, 'oidc-callback-failed');
    await page.getByRole('link', { name: 'Back to sign-in' }).click();
    await page.getByRole('heading', { name: 'Sign in', level: 1 }).waitFor();
    expect(await page.evaluate('sessionStorage.length')).toBe(0);
    expect(tab.problems).toEqual([]);
    await tab.close();
  },
  120_000,
);
