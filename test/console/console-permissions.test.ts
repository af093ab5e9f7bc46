/**
 * Delegated administration in the console (docs/roles.md#system-permissions), in Chromium: each
 * tenant page is shown to those whose role holds its permission, whatever the role is called. An
 * "IT admin" (directory, SSO, domains, members:read) sees Members and Directory, opens the
 * Directory page, and is refused Invitations, Roles and Tenant events by URL, each refusal naming
 * the permission; the members page shows them no change buttons. Checked with axe.
 */
import request from 'supertest';
import { adminToken, closeOwnerConnection, createTenant, createUser, tokenFor, unique } from '../helpers/factories';
import { browserIt, checkPage, openConsole, startConsoleHarness, type ConsoleHarness } from '../helpers/console-browser';

const browserTest = browserIt('console-permissions.test.ts');
let h: ConsoleHarness;

beforeAll(async () => {
  h = await startConsoleHarness();
}, 240_000);

afterAll(async () => {
  await h?.close();
  await closeOwnerConnection();
}, 60_000);

browserTest(
  'an IT admin sees the pages their permissions open, and is refused the others naming the permission',
  async () => {
    const tenant = await createTenant();
    const key = unique('it-admin').toLowerCase().replace(/[^a-z0-9-]/g, '-');
    await request(h.t.app)
      .post('/api/tenant/roles')
      .set('Authorization', `Bearer ${adminToken()}`)
      .set('X-Tenant', tenant.slug)
      .send({ key, name: 'IT admin', permissions: ['tenant:directory:manage', 'tenant:sso:manage', 'tenant:domains:manage', 'tenant:members:read'] })
      .expect(201);
    const it = await createUser(tenant.id, { role: key });
    const tab = await openConsole(h, { token: tokenFor({ sub: it.subject, email: it.email }), tenant: tenant.slug, path: '/tenant/directory' });
    const { page } = tab;
    await page.getByRole('heading', { name: 'Directory', level: 1 }).waitFor();
    await page.getByRole('button', { name: 'Create a token' }).waitFor();
    const nav = page.getByRole('navigation', { name: 'Console' });
    expect(await nav.getByRole('link', { name: 'Directory' }).count()).toBe(1);
    expect(await nav.getByRole('link', { name: 'Members' }).count()).toBe(1);
    for (const name of ['Invitations', 'Roles', 'Tenant events']) expect(await nav.getByRole('link', { name, exact: true }).count()).toBe(0);
    await checkPage(page, 'it-admin-directory');

    for (const [path, permission] of [
      ['/tenant/invitations', 'tenant:invitations:write'],
      ['/tenant/roles', 'tenant:roles:write'],
      ['/tenant/events', 'tenant:events:read'],
    ] as const) {
      await page.goto(`${h.base}/console${path}`);
      await page.getByRole('alert').getByText(`this page needs the permission ${permission} in "${tenant.name}", and your role there (${key}) does not hold it`, { exact: false }).waitFor();
    }

    await page.goto(`${h.base}/console/tenant/members`);
    await page.getByRole('heading', { name: 'Members', level: 1 }).waitFor();
    await page.getByRole('cell', { name: it.email }).waitFor();
    expect(await page.getByRole('main').getByRole('button').filter({ hasText: /Make|Remove/ }).count()).toBe(0);
    expect(tab.problems).toEqual([]);
    await tab.close();
  },
  120_000,
);
