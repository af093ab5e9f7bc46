/**
 * The console's frame in Chromium: /console serves the app under the same CSP as /docs, a
 * `tenantctl console`-style link signs in (and leaves the address bar at once), a person without
 * a token sees the sign-in page, and signing out forgets the token.
 */
import { closeOwnerConnection, tenantWithMember } from './factories';
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
