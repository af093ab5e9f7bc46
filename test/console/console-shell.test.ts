/**
 * The console's frame in Chromium: /console serves the app under the same CSP as /docs, a
 * `tenantctl console`-style link signs in (and leaves the address bar at once), a person without
 * a token sees the sign-in page, and signing out forgets the token. A sign-in link pasted into a
 * tab that is already open (only the fragment changes) signs in its person; the home page with
 * `?tenant=<slug>` (a registration's dashboard_url) selects that tenant. Without
 * SERVICE_FRONTEND_BASE_URL (this harness), an invitation's link is the console's own accept page.
 */
import { closeOwnerConnection, createTenant, createUser, tenantWithMember, tokenFor, unique } from '../helpers/factories';
import { browserIt, checkPage, openConsole, signInLink, startConsoleHarness, type ConsoleHarness } from '../helpers/console-browser';

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
    const pasted = new URL(await signInLink(h.base, second));
    await page.evaluate(`window.location.hash = ${JSON.stringify(pasted.hash)}`);
    await page.getByText(`Signed in as ${sub}@example.test`).waitFor();
    await page.getByRole('cell', { name: tenantB.slug, exact: true }).waitFor();
    expect(await page.getByRole('cell', { name: first.tenant.slug, exact: true }).count()).toBe(0);
    expect(new URL(page.url()).hash).toBe('');

    // Two tenants: none is chosen for them until they pick one, or a link names it.
    await expect(page.getByRole('banner').getByLabel('Tenant').inputValue()).resolves.toBe('');
    await page.goto(`${h.base}/console/?tenant=${tenantB.slug}`);
    await page.getByRole('cell', { name: tenantB.slug, exact: true }).waitFor();
    await expect(page.getByRole('banner').getByLabel('Tenant').inputValue()).resolves.toBe(tenantB.slug);
    expect(new URL(page.url()).search).toBe('');
    await page.getByRole('link', { name: 'Members' }).click();
    await page.getByRole('heading', { name: 'Members', level: 1 }).waitFor();
    expect(tab.problems).toEqual([]);
    await tab.close();
  },
  120_000,
);

browserTest(
  'without SERVICE_FRONTEND_BASE_URL an invitation still gets a working link: the console\'s own accept page',
  async () => {
    const { tenant, token } = await tenantWithMember('admin');
    const email = `${unique('shell-invitee')}@example.test`;
    const adminTab = await openConsole(h, { token, tenant: tenant.slug, path: '/tenant/invitations' });
    const a = adminTab.page;
    await a.getByLabel('Email address').fill(email);
    await a.getByRole('button', { name: 'Send invitation' }).click();
    await a.getByRole('status').filter({ hasText: `Invitation created for ${email}` }).waitFor();
    const link = await a.getByLabel('Accept link').inputValue();
    expect(link).toMatch(new RegExp(`^${h.base}/console/invitations/accept\\?token=[^&#]+$`));

    const inviteeTab = await openConsole(h, { token: tokenFor({ sub: unique('shell-invitee'), email }), path: link.slice(`${h.base}/console`.length) });
    const b = inviteeTab.page;
    await b.getByRole('button', { name: 'Accept invitation' }).click();
    await b.getByRole('heading', { name: 'Tenant', level: 1 }).waitFor();
    await b.getByRole('main').getByRole('heading', { name: tenant.name, level: 2 }).waitFor();
    expect(adminTab.problems).toEqual([]);
    expect(inviteeTab.problems).toEqual([]);
    await adminTab.close();
    await inviteeTab.close();
  },
  120_000,
);

browserTest(
  'a sign-in that expires while the console is open, or that the service refuses, ends on the sign-in page with the reason',
  async () => {
    const { user } = await tenantWithMember('member');
    // Expires seconds after it is opened (time enough for its link's code to be made on a busy
    // machine): the console signs out at expiry by itself.
    const short = tokenFor({ sub: user.subject, email: user.email, ttlSeconds: 12 });
    const tab = await openConsole(h, { token: short });
    const { page } = tab;
    await page.getByRole('heading', { name: 'Your tenants', level: 1 }).waitFor();
    await page.getByRole('heading', { name: 'Sign in', level: 1 }).waitFor({ timeout: 30_000 });
    await page.getByRole('status').getByText('Your sign-in has expired. Sign in again.').waitFor();
    expect(await page.evaluate('sessionStorage.getItem("tenant-service.console.token")')).toBeNull();

    // A token the service does not accept (its signature altered; no link can carry one, but a
    // tab's stored token can stop being accepted): the first 401 signs out.
    const valid = tokenFor({ sub: user.subject, email: user.email });
    const forged = `${valid.slice(0, -6)}${valid.slice(-6) === 'AAAAAA' ? 'BBBBBB' : 'AAAAAA'}`;
    await page.evaluate(`sessionStorage.setItem("tenant-service.console.token", ${JSON.stringify(forged)})`);
    await page.goto(`${h.base}/console/`);
    await page.getByRole('heading', { name: 'Sign in', level: 1 }).waitFor();
    await page.getByRole('status').getByText('Your sign-in has expired or was not accepted. Sign in again.').waitFor();
    expect(await page.evaluate('sessionStorage.getItem("tenant-service.console.token")')).toBeNull();
    expect(tab.problems).toEqual([]);
    await tab.close();
  },
  120_000,
);
