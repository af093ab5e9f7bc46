/**
 * `tenantctl console`: the compiled CLI prints a sign-in link carrying a one-time code (in the
 * fragment, never the query; never a token), and that very link, opened in Chromium, signs the
 * person in once: a platform admin (`--admin`, subject `console-admin` by default) lands on All
 * tenants, a member with --tenant on that tenant. The link opened again — in a fresh browser, or
 * from Chromium's History database — lands on the sign-in page saying it was used; a link opened
 * after its code expired says that; two browsers opening one link at once sign in exactly once.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { chromium } from 'playwright-core';
import { CHROMIUM_ARGS } from '../../bench/scenarios/chromium';
import { CONSOLE_CODE_TTL_SECONDS, CONSOLE_LINK_TTL_SECONDS, DEFAULT_ADMIN_SUBJECT } from '../../src/cli/console';
import { closeOwnerConnection, tenantWithMember, unique } from '../helpers/factories';
import { TEST_DATA_DIR } from '../helpers/app';
import { CLI, ROOT, runProcess, type Run } from '../helpers/cli';
import { browserIt, checkPage, CHROMIUM, openConsole, startConsoleHarness, type ConsoleHarness, type ConsoleTab } from '../helpers/console-browser';
import { buildOnce } from '../helpers/server-process';

const browserTest = browserIt('cli-console.test.ts');
let h: ConsoleHarness;

beforeAll(async () => {
  await buildOnce();
  h = await startConsoleHarness();
}, 240_000);

afterAll(async () => {
  await h?.close();
  await closeOwnerConnection();
}, 60_000);

function tenantctl(args: string[], url = h.base): Promise<Run> {
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp', SERVICE_URL: url, SERVICE_DATA_DIR: TEST_DATA_DIR };
  return runProcess(process.execPath, [CLI, ...args], { cwd: ROOT, env });
}

/** The link on stdout (and nothing else there): a code in the fragment, no token anywhere. */
function parseLink(run: Run, landing = '/console/'): { link: string; code: string; expires: number; tenant: string | null } {
  expect(run.code).toBe(0);
  expect(run.stdout.endsWith('\n')).toBe(true);
  const link = run.stdout.trimEnd();
  expect(link).not.toMatch(/\s/);
  expect(link).not.toContain('eyJ'); // no JWT (a JSON header in base64url starts so)
  const url = new URL(link);
  expect(`${url.origin}${url.pathname}`).toBe(`${h.base}${landing}`);
  expect(url.search).toBe('');
  const fragment = new URLSearchParams(url.hash.slice(1));
  expect([...fragment.keys()].sort()).toEqual(['code', 'expires', ...(fragment.has('tenant') ? ['tenant'] : [])].sort());
  const code = fragment.get('code')!;
  expect(code).toMatch(/^[A-Za-z0-9_-]{43}$/);
  return { link, code, expires: Number(fragment.get('expires')), tenant: fragment.get('tenant') };
}

function claimsOf(token: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8')) as Record<string, unknown>;
}

const storedToken = async (tab: ConsoleTab) => (await tab.page.evaluate('sessionStorage.getItem("tenant-service.console.token")')) as string | null;

/** Opens `link` in a fresh browser context; every URL its page navigated to is kept. */
async function openLink(link: string): Promise<ConsoleTab & { urls: string[] }> {
  const tab = await openConsole(h, { path: '/signin' });
  const urls: string[] = [];
  tab.page.on('framenavigated', (f) => urls.push(f.url()));
  await tab.page.goto(link);
  return Object.assign(tab, { urls });
}

async function expectRefused(tab: ConsoleTab, text: string, shot: string): Promise<void> {
  await tab.page.getByRole('heading', { name: 'Sign in', level: 1 }).waitFor();
  await tab.page.getByRole('status').getByText(text, { exact: false }).waitFor();
  expect(new URL(tab.page.url()).hash).toBe('');
  expect(await storedToken(tab)).toBeNull();
  await checkPage(tab.page, shot);
}

browserTest(
  'tenantctl console --admin: console-admin lands on All tenants; the link then signs nobody in, in a fresh browser',
  async () => {
    const run = await tenantctl(['console', '--admin']);
    const { link, expires } = parseLink(run, '/console/admin/tenants');
    expect(run.stderr).toContain(`subject ${DEFAULT_ADMIN_SUBJECT}, the default with --admin`);
    expect(run.stderr).toContain('(platform admin)');
    expect(run.stderr).toContain(`within ${CONSOLE_CODE_TTL_SECONDS / 60} minutes`);
    expect(run.stderr).toContain(`the sign-in lasts ${CONSOLE_LINK_TTL_SECONDS / 60} minutes`);
    expect(expires * 1000).toBeGreaterThan(Date.now());

    const tab = await openLink(link);
    const { page } = tab;
    await page.getByRole('heading', { name: 'All tenants', level: 1 }).waitFor();
    expect(page.url()).toBe(`${h.base}/console/admin/tenants`);
    await page.getByText(`Signed in as ${DEFAULT_ADMIN_SUBJECT} (platform admin)`).waitFor();
    const token = (await storedToken(tab))!;
    expect(claimsOf(token)).toMatchObject({ sub: DEFAULT_ADMIN_SUBJECT, roles: ['admin'] });
    const claims = claimsOf(token);
    expect((claims.exp as number) - (claims.iat as number)).toBe(CONSOLE_LINK_TTL_SECONDS);
    // No address this tab was ever at holds the token.
    for (const url of [...tab.urls, page.url(), link]) expect(url).not.toContain(token.split('.')[1]!);
    await checkPage(page, 'cli-console-admin');
    expect(tab.problems).toEqual([]);

    // The same link, in another browser (someone who found it): used.
    const again = await openLink(link);
    await expectRefused(again, 'This sign-in link was already used', 'cli-console-used');
    expect(again.problems).toEqual([]);
    await again.close();
    await tab.close();
  },
  120_000,
);

browserTest(
  'the link kept in Chromium\'s History database holds no token and, loaded in a fresh profile, signs nobody in',
  async () => {
    const { link } = parseLink(await tenantctl(['console', '--admin']), '/console/admin/tenants');
    const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'tenant-service-profile-'));
    try {
      const context = await chromium.launchPersistentContext(profile, { executablePath: CHROMIUM, args: CHROMIUM_ARGS });
      const page = await context.newPage();
      await page.goto(link);
      await page.getByRole('heading', { name: 'All tenants', level: 1 }).waitFor();
      const token = (await page.evaluate('sessionStorage.getItem("tenant-service.console.token")')) as string;
      expect(token).toBeTruthy();
      await context.close(); // writes the History database
      const { stdout } = await promisify(execFile)('sqlite3', [path.join(profile, 'Default', 'History'), 'select url from urls']);
      const urls = stdout.split('\n').filter(Boolean);
      expect(urls.some((u) => u.startsWith(`${h.base}/console/admin/tenants`))).toBe(true);
      for (const url of urls) {
        expect(url).not.toContain('eyJ');
        expect(url).not.toContain(token.split('.')[2]!);
      }
      // What History kept, opened elsewhere: every console URL lands on the sign-in page.
      for (const url of urls.filter((u) => u.startsWith(`${h.base}/console`))) {
        const tab = await openLink(url);
        await tab.page.getByRole('heading', { name: 'Sign in', level: 1 }).waitFor();
        expect(await storedToken(tab)).toBeNull();
        expect(tab.problems).toEqual([]);
        await tab.close();
      }
    } finally {
      fs.rmSync(profile, { recursive: true, force: true });
    }
  },
  120_000,
);

browserTest(
  'a member\'s link with --tenant opens on that tenant, without the platform navigation',
  async () => {
    const { tenant, user } = await tenantWithMember('member');
    const { link, tenant: selected } = parseLink(await tenantctl(['console', '--sub', user.subject, '--email', user.email, '--tenant', tenant.slug]));
    expect(selected).toBe(tenant.slug);
    const tab = await openLink(link);
    const { page } = tab;
    await page.getByRole('heading', { name: 'Your tenants', level: 1 }).waitFor();
    await page.getByText(`Signed in as ${user.email}`, { exact: true }).waitFor();
    const claims = claimsOf((await storedToken(tab))!);
    expect(claims).toMatchObject({ sub: user.subject, email: user.email });
    expect(claims).not.toHaveProperty('tenant');
    expect(claims).not.toHaveProperty('roles');
    expect(await page.getByLabel('Tenant', { exact: true }).inputValue()).toBe(tenant.slug);
    const nav = page.getByRole('navigation', { name: 'Console' });
    await nav.getByRole('heading', { name: tenant.name }).waitFor();
    expect(await nav.getByRole('heading', { name: 'Platform' }).count()).toBe(0);
    expect(page.url()).toBe(`${h.base}/console/`);
    expect(tab.problems).toEqual([]);
    await tab.close();
  },
  120_000,
);

browserTest(
  'two browsers opening one link at once: exactly one is signed in, the other is told the link was used',
  async () => {
    const sub = unique('race');
    const { link } = parseLink(await tenantctl(['console', '--sub', sub]));
    const tabs = await Promise.all([openConsole(h, { path: '/signin' }), openConsole(h, { path: '/signin' })]);
    await Promise.all(tabs.map((t) => t.page.goto(link)));
    const outcome = async (t: ConsoleTab) => {
      const signedIn = t.page.getByText(`Signed in as ${sub}`);
      const refused = t.page.getByRole('status').getByText('This sign-in link was already used', { exact: false });
      await signedIn.or(refused).waitFor();
      return (await signedIn.count()) > 0 ? 'signed in' : 'refused';
    };
    expect((await Promise.all(tabs.map(outcome))).sort()).toEqual(['refused', 'signed in']);
    for (const t of tabs) {
      expect(t.problems).toEqual([]);
      await t.close();
    }
  },
  120_000,
);

browserTest(
  'a link opened after its code expired lands on the sign-in page, which says so, and keeps no token',
  async () => {
    const { link, expires } = parseLink(await tenantctl(['console', '--sub', unique('late'), '--code-ttl', '1s']));
    // The browser's clock, like the service's, past the code's expiry.
    while (Date.now() <= expires * 1000) await new Promise((r) => setTimeout(r, expires * 1000 - Date.now() + 50));
    await new Promise((r) => setTimeout(r, 1000));
    const tab = await openLink(link);
    await expectRefused(tab, 'This sign-in link has expired', 'cli-console-expired');
    // The page says how to get a new link, and how long one lasts.
    await tab.page.getByText(`Open the link within ${CONSOLE_CODE_TTL_SECONDS / 60} minutes`, { exact: false }).waitFor();
    await tab.page.getByText(`signs you in for ${CONSOLE_LINK_TTL_SECONDS / 60} minutes`, { exact: false }).waitFor();
    expect(tab.problems).toEqual([]);
    await tab.close();
  },
  120_000,
);

describe('tenantctl console refuses what it cannot sign', () => {
  it.each([
    [['console', '--email', 'a@example.test'], /--sub is required without --admin/],
    [['console', '--sub', 'a', '--ttl', '13h'], /--ttl must be a positive duration .* at most 12h/],
    [['console', '--admin', '--code-ttl', '16m'], /--code-ttl must be a positive duration .* at most 15m/],
    [['console', '--sub', 'a', '--tenant', 'Not A Slug'], /--tenant must be a tenant slug/],
  ])('%j exits 2 with nothing on stdout', async (args, message) => {
    const run = await tenantctl(args);
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(message);
  }, 60_000);

  it('a service it cannot reach: exit 2, no link', async () => {
    const run = await tenantctl(['console', '--admin'], 'http://127.0.0.1:9');
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(/cannot reach the service at http:\/\/127\.0\.0\.1:9/);
  }, 60_000);

  it('a service URL with a path keeps it in the link', async () => {
    // The service behind a prefix, as a reverse proxy serves it.
    const proxy = http.createServer((req, res) => {
      const target = new URL(h.base);
      const up = http.request({ host: target.hostname, port: target.port, method: req.method, path: (req.url ?? '').replace(/^\/svc/, ''), headers: req.headers }, (r) => {
        res.writeHead(r.statusCode ?? 502, r.headers);
        r.pipe(res);
      });
      req.pipe(up);
    });
    await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
    try {
      const base = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}/svc/`;
      const run = await tenantctl(['console', '--sub', 'a'], base);
      expect(run.code).toBe(0);
      expect(run.stdout).toMatch(new RegExp(`^${base.replace(/[.]/g, '\\.')}console/#code=[\\w-]{43}&expires=\\d+\\n$`));
    } finally {
      await new Promise<void>((r) => proxy.close(() => r()));
    }
  }, 60_000);
});
