/**
 * The console's frame in Chromium: /console serves the app under the same CSP as /docs, a
 * `tenantctl console`-style link signs in (and leaves the address bar at once), a person without
 * a token sees the sign-in page, and signing out forgets the token. A sign-in link pasted into a
 * tab that is already open (only the fragment changes) signs in its person; the home page with
 * `?tenant=<slug>` (a registration's dashboard_url) selects that tenant.
 */
import { closeOwnerConnection, createTenant, createUser, tenantWithMember, tokenFor } from './factories';
import { browserIt, checkPage, openConsole, startConsoleHarness, type ConsoleHarness } from './helpers/console-browser';

const browserTest = browserIt('console-shell.test.ts');
let h: ConsoleHarness;

beforeAll(async () => {
  h = await startConsoleHarness();
}, 240_000);

afterAll(async () => {
  await h?.close();
  await closeOwnerConnection();
}, 60_000);

browserTest(
  'a sign-in link opens the console on the person\'s tenants and sign-out forgets the token',
  async () => {
    const { tenant, token } = await tenantWithMember('admin');
    const tab = await openConsole(h, { token });
    const { page } = tab;
    await page.getByRole('heading', { name: 'Your tenants', level: 1 }).waitFor();
    expect(page.url()).toBe(`${h.base}/console/`);
    await page.getByRole('cell', { name: tenant.slug, exact: true }).waitFor();
    await checkPage(page, 'my-tenants');
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in', level: 1 }).waitFor();
    expect(await page.evaluate('JSON.stringify(Object.keys(sessionStorage).filter((k) => k.includes("token")))')).toBe('[]');
    await checkPage(page, 'sign-in');
    expect(tab.problems).toEqual([]);
    await tab.close();
  },
  120_000,
);

browserTest(
  'a sign-in link pasted into an open tab switches to its person, and ?tenant= selects a tenant',
  async () => {
    const first = await tenantWithMember('member');
    const tenantA = await createTenant({ name: 'Shell Alpha' });
    const tenantB = await createTenant({ name: 'Shell Beta' });
    const sub = `shell-${Date.now()}`;
    await createUser(tenantA.id, { subject: sub, role: 'admin' });
    await createUser(tenantB.id, { subject: sub, role: 'member' });
    const second = tokenFor({ sub, email: `${sub}@example.test` });

    const tab = await openConsole(h, { token: first.token });
    const { page } = tab;
    await page.getByRole('cell', { name: first.tenant.slug, exact: true }).waitFor();
    // Same document, new fragment: no page load, so the console must notice the hashchange.
    await page.evaluate(`window.location.hash = ${JSON.stringify(`token=${second}`)}`);
    await page.getByText(`Signed in as ${sub}@example.test`).waitFor();
    await page.getByRole('cell', { name: tenantB.slug, exact: true }).waitFor();
    expect(await page.getByRole('cell', { name: first.tenant.slug, exact: true }).count()).toBe(0);
    expect(new URL(page.url()).hash).toBe('');

    // Two tenants: none is chosen for them until they pick one, or a link names it.
    await expect(page.getByLabel('Tenant').inputValue()).resolves.toBe('');
    await page.goto(`${h.base}/console/?tenant=${tenantB.slug}`);
    await page.getByRole('cell', { name: tenantB.slug, exact: true }).waitFor();
    await expect(page.getByLabel('Tenant').inputValue()).resolves.toBe(tenantB.slug);
    expect(new URL(page.url()).search).toBe('');
    await page.getByRole('link', { name: 'Members' }).click();
    await page.getByRole('heading', { name: 'Members', level: 1 }).waitFor();
    expect(tab.problems).toEqual([]);
    await tab.close();
  },
  120_000,
);
