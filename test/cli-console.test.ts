/**
 * `tenantctl console`: the compiled CLI prints a sign-in link (the token in the fragment, never
 * the query), and that very link, opened in Chromium, signs the person in: a platform admin sees
 * the platform navigation, a member with --tenant lands on that tenant, and a link opened after
 * its expiry lands on the sign-in page saying so.
 */
import { CONSOLE_LINK_TTL_SECONDS } from '../src/cli/console';
import { closeOwnerConnection, tenantWithMember, unique } from './factories';
import { TEST_DATA_DIR } from './helpers/app';
import { CLI, ROOT, runProcess, type Run } from './helpers/cli';
import { browserIt, checkPage, openConsole, startConsoleHarness, type ConsoleHarness } from './helpers/console-browser';
import { buildOnce } from './helpers/server-process';

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

function tenantctl(args: string[]): Promise<Run> {
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp', SERVICE_URL: h.base, SERVICE_DATA_DIR: TEST_DATA_DIR };
  return runProcess(process.execPath, [CLI, ...args], { cwd: ROOT, env });
}

/** The link on stdout (and nothing else there), and its token's claims. */
function parseLink(run: Run): { link: string; token: string; tenant: string | null; claims: Record<string, unknown> } {
  expect(run.code).toBe(0);
  expect(run.stdout.endsWith('\n')).toBe(true);
  const link = run.stdout.trimEnd();
  expect(link).not.toMatch(/\s/);
  const url = new URL(link);
  expect(`${url.origin}${url.pathname}`).toBe(`${h.base}/console/`);
  expect(url.search).toBe('');
  const fragment = new URLSearchParams(url.hash.slice(1));
  const token = fragment.get('token')!;
  const claims = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8')) as Record<string, unknown>;
  return { link, token, tenant: fragment.get('tenant'), claims };
}

/** Waits until the browser's clock, like the service's, is past a token's expiry. */
async function untilExpired(exp: number): Promise<void> {
  while (Date.now() <= exp * 1000) await new Promise((r) => setTimeout(r, exp * 1000 - Date.now() + 50));
}

const tokenKeys = 'JSON.stringify(Object.keys(sessionStorage).filter((k) => k.includes("token")))';

browserTest(
  'a platform admin opens the printed link: signed in with the platform navigation, the token gone from the address bar',
  async () => {
    const sub = unique('console-admin');
    const run = await tenantctl(['console', '--sub', sub, '--email', `${sub}@example.test`, '--admin']);
    const { link, tenant, claims } = parseLink(run);
    expect(tenant).toBeNull();
    expect(claims).toMatchObject({ sub, email: `${sub}@example.test`, roles: ['admin'] });
    expect((claims.exp as number) - (claims.iat as number)).toBe(CONSOLE_LINK_TTL_SECONDS);
    expect(run.stderr).toContain(`${sub}@example.test (platform admin)`);
    expect(run.stderr).toContain(`valid for ${CONSOLE_LINK_TTL_SECONDS / 60} minutes`);

    // The sign-in page first (its text names the links' default lifetime), then the link itself.
    const tab = await openConsole(h, { path: '/signin' });
    const { page } = tab;
    await page.getByRole('heading', { name: 'Sign in', level: 1 }).waitFor();
    await page.getByText(`The link signs you in for ${CONSOLE_LINK_TTL_SECONDS / 60} minutes`, { exact: false }).waitFor();
    await page.goto(link);
    await page.getByRole('heading', { name: 'Your tenants', level: 1 }).waitFor();
    expect(page.url()).toBe(`${h.base}/console/`);
    await page.getByText(`Signed in as ${sub}@example.test (platform admin)`).waitFor();
    const nav = page.getByRole('navigation', { name: 'Console' });
    await nav.getByRole('heading', { name: 'Platform' }).waitFor();
    await nav.getByRole('link', { name: 'All tenants' }).waitFor();
    expect(await page.evaluate('location.hash')).toBe('');
    await checkPage(page, 'cli-console-admin');
    expect(tab.problems).toEqual([]);
    await tab.close();
  },
  120_000,
);

browserTest(
  'a member\'s link with --tenant opens on that tenant, without the platform navigation',
  async () => {
    const { tenant, user } = await tenantWithMember('member');
    const { link, tenant: selected, claims } = parseLink(await tenantctl(['console', '--sub', user.subject, '--email', user.email, '--tenant', tenant.slug]));
    expect(selected).toBe(tenant.slug);
    expect(claims).not.toHaveProperty('tenant');
    expect(claims).not.toHaveProperty('roles');
    const tab = await openConsole(h, { path: '/signin' });
    const { page } = tab;
    await page.goto(link);
    await page.getByRole('heading', { name: 'Your tenants', level: 1 }).waitFor();
    await page.getByText(`Signed in as ${user.email}`, { exact: true }).waitFor();
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
  'a link opened after its expiry lands on the sign-in page, which says so, and keeps no token',
  async () => {
    const { link, claims } = parseLink(await tenantctl(['console', '--sub', unique('late'), '--ttl', '1s']));
    expect((claims.exp as number) - (claims.iat as number)).toBe(1);
    await untilExpired(claims.exp as number);
    const tab = await openConsole(h, { path: '/signin' });
    const { page } = tab;
    await page.goto(link);
    await page.getByRole('heading', { name: 'Sign in', level: 1 }).waitFor();
    await page.getByRole('status').getByText('This sign-in link has expired', { exact: false }).waitFor();
    expect(page.url()).toBe(`${h.base}/console/`);
    expect(await page.evaluate(tokenKeys)).toBe('[]');
    await checkPage(page, 'cli-console-expired');
    expect(tab.problems).toEqual([]);
    await tab.close();
  },
  120_000,
);

describe('tenantctl console refuses what it cannot sign', () => {
  it.each([
    [['console', '--email', 'a@example.test'], /required option '--sub <subject>'/],
    [['console', '--sub', 'a', '--ttl', '13h'], /--ttl must be a positive duration .* at most 12h/],
    [['console', '--sub', 'a', '--tenant', 'Not A Slug'], /--tenant must be a tenant slug/],
  ])('%j exits 2 with nothing on stdout', async (args, message) => {
    const run = await tenantctl(args);
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(message);
  }, 60_000);

  it('a service URL with a path keeps it in the link', async () => {
    const run = await runProcess(process.execPath, [CLI, '--url', 'https://tenants.example.com/svc/', 'console', '--sub', 'a'], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp', SERVICE_DATA_DIR: TEST_DATA_DIR },
    });
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^https:\/\/tenants\.example\.com\/svc\/console\/#token=[\w.-]+\n$/);
  }, 60_000);
});
