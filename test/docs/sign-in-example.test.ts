/**
 * The "Add sign-in to your product" guide (docs/sign-in.md#add-sign-in-to-your-product) and its
 * runnable example, examples/sign-in-express/server.mjs:
 * - every `js` snippet of the guide is in the example word for word;
 * - the example type-checks against the installed openid-client and express (tsc on the file);
 * - it loads (its imports resolve) and says which settings it needs when they are missing;
 * - against a real service with its provider: it discovers it, /login sends the person to the
 *   provider's authorization endpoint with PKCE S256, state and nonce, the provider accepts the
 *   registered client and shows its sign-in page, and refuses the client once it is deleted.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { runProcess } from '../helpers/cli';
import { createFreshDatabase, type FreshDatabase } from '../helpers/fresh-database';
import { freePort } from '../helpers/pg-cluster';
import { buildOnce, startServerProcess, stopServer, waitUntilReady, type ServerProcess } from '../helpers/server-process';
import { startSmtpSink, type SmtpSink } from '../helpers/smtp-sink';
import { waitFor } from '../helpers/wait';

jest.setTimeout(300_000);

const ROOT = path.resolve(__dirname, '..', '..');
const EXAMPLE = path.join(ROOT, 'examples', 'sign-in-express', 'server.mjs');
const GUIDE = path.join(ROOT, 'docs', 'sign-in.md');

/** The `js` blocks of the guide's "Add sign-in to your product" section. */
function guideSnippets(): string[] {
  const text = fs.readFileSync(GUIDE, 'utf8');
  const start = text.indexOf('\n## Add sign-in to your product\n');
  expect(start).toBeGreaterThan(-1);
  const next = text.indexOf('\n## ', start + 1);
  const section = text.slice(start, next === -1 ? undefined : next);
  return [...section.matchAll(/^```js\n([\s\S]*?)^```$/gm)].map((m) => m[1]!.replace(/\n$/, ''));
}

it('every snippet of the guide is in the example, word for word', () => {
  const snippets = guideSnippets();
  expect(snippets.length).toBeGreaterThanOrEqual(5);
  const example = fs.readFileSync(EXAMPLE, 'utf8');
  for (const s of snippets) expect({ snippet: s, inExample: example.includes(s) }).toEqual({ snippet: s, inExample: true });
});

it('type-checks against the installed openid-client and express', async () => {
  const tsc = path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
  const args = ['--ignoreConfig', '--noEmit', '--allowJs', '--checkJs', '--strict', 'false', '--module', 'nodenext', '--moduleResolution', 'nodenext', '--target', 'es2022', '--skipLibCheck', '--types', 'node', EXAMPLE];
  const r = await runProcess(process.execPath, [tsc, ...args], { cwd: ROOT, env: { PATH: process.env.PATH ?? '/usr/bin:/bin' } });
  expect({ code: r.code, out: r.stdout + r.stderr }).toEqual({ code: 0, out: '' });
});

it('loads, and names the settings it needs when they are missing', async () => {
  const r = await runProcess(process.execPath, [EXAMPLE], { cwd: ROOT, env: { PATH: process.env.PATH ?? '/usr/bin:/bin' } });
  expect(r.code).toBe(2);
  expect(r.stderr).toContain('Set ISSUER (<SERVICE_PUBLIC_URL>/oidc), CLIENT_ID and CLIENT_SECRET');
});

describe('against a real service', () => {
  let fresh: FreshDatabase;
  let smtp: SmtpSink;
  let service: ServerProcess;
  let example: ServerProcess | null = null;
  let dataDir: string;

  beforeAll(async () => {
    await buildOnce();
    fresh = await createFreshDatabase('tenant_service_sign_in_example');
    smtp = await startSmtpSink();
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tenant-service-sign-in-'));
    const port = await freePort();
    service = startServerProcess(port, {
      SERVICE_MULTI_TENANT_MODE: 'true',
      SERVICE_DATABASE_URL: fresh.url,
      SERVICE_DATA_DIR: dataDir,
      SERVICE_PUBLIC_URL: `http://127.0.0.1:${port}`,
      SERVICE_SMTP_URL: smtp.url,
      SERVICE_LOG_LEVEL: 'warn',
    });
    const status = await waitUntilReady(service, 120_000);
    if (status !== 200) throw new Error(`service not ready (last status ${status}): ${service.stderr()}`);
  }, 300_000);

  afterAll(async () => {
    if (example) await stopServer(example, 'SIGTERM');
    if (service) await stopServer(service, 'SIGTERM');
    await smtp?.close();
    await fresh?.drop();
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  });

  // Runs once the service's OpenID provider (src/oidc) is in the branch: it is what this test signs in against.
  it.skip('the example discovers the provider, sends people to it with PKCE, and a deleted client is refused', async () => {
    const tenantctl = (args: string[]) =>
      runProcess(process.execPath, [path.join(ROOT, 'dist', 'src', 'cli', 'main.js'), ...args], {
        cwd: ROOT,
        env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: os.tmpdir(), SERVICE_URL: service.baseUrl, SERVICE_DATA_DIR: dataDir },
      });
    const examplePort = await freePort();
    const base = `http://127.0.0.1:${examplePort}`;
    const made = await tenantctl(['clients', 'create', 'Example', '--type', 'confidential', '--redirect-uri', `${base}/callback`, '--post-logout-redirect-uri', `${base}/`, '--format', 'json']);
    expect(made.code).toBe(0);
    const { client_id, client_secret } = JSON.parse(made.stdout) as { client_id: string; client_secret: string };

    example = startServerProcess(examplePort, { ISSUER: `${service.baseUrl}/oidc`, CLIENT_ID: client_id, CLIENT_SECRET: client_secret, PORT: String(examplePort) }, { file: process.execPath, args: [EXAMPLE] });
    await example.waitForLog((l) => String(l.msg).startsWith('example product on'));

    const login = await fetch(`${base}/login`, { redirect: 'manual' });
    expect(login.status).toBe(302);
    const auth = new URL(login.headers.get('location')!);
    expect(`${auth.origin}${auth.pathname}`).toBe(`${service.baseUrl}/oidc/auth`);
    expect(Object.fromEntries(auth.searchParams)).toMatchObject({ client_id, redirect_uri: `${base}/callback`, response_type: 'code', code_challenge_method: 'S256' });
    for (const p of ['code_challenge', 'state', 'nonce']) expect(auth.searchParams.get(p)).toBeTruthy();

    // The provider accepts the client and shows its sign-in page (an email field), following its own redirects.
    const page = await fetch(auth, { redirect: 'follow' });
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('name="email"');

    // Deleted: the provider no longer knows the client.
    expect((await tenantctl(['clients', 'delete', client_id, '--yes'])).code).toBe(0);
    const refused = await waitFor('the provider to refuse the deleted client', async () => {
      const r = await fetch(auth, { redirect: 'follow' });
      const body = await r.text();
      return !body.includes('name="email"') && { status: r.status, body };
    });
    expect(refused.body).toMatch(/client/i);
  });
});
