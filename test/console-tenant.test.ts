/**
 * The tenant pages as a member sees them: Members without any admin control, refusals that say
 * why on the admin pages reached by a direct URL, and leaving the tenant.
 */
import { closeOwnerConnection, createTenant, createUser, tokenFor } from './factories';
import { browserIt, checkPage, openConsole, startConsoleHarness, type ConsoleHarness } from './helpers/console-browser';

const browserTest = browserIt('console-tenant.test.ts');
let h: ConsoleHarness;

beforeAll(async () => {
  h = await startConsoleHarness();
}, 240_000);

afterAll(async () => {
  await h?.close();
  await closeOwnerConnection();
}, 60_000);

browserTest(
  'a member sees Members without admin controls, is refused the admin pages by URL, and can leave',
  async () => {
    const tenant = await createTenant();
    const admin = await createUser(tenant.id, { role: 'admin' });
    const member = await createUser(tenant.id, { role: 'member' });
    const tab = await openConsole(h, { token: tokenFor({ sub: member.subject, email: member.email }), tenant: tenant.slug, path: '/tenant/members' });
    const { page } = tab;
    const main = page.getByRole('main');

    await page.getByRole('heading', { name: 'Members', level: 1 }).waitFor();
    await main.getByRole('cell', { name: admin.email, exact: true }).waitFor();
    await main.getByRole('cell', { name: member.email, exact: true }).waitFor();
    expect(await main.getByRole('button').filter({ hasText: /Make|Remove|Add user/ }).count()).toBe(0);
    expect(await main.getByRole('columnheader', { name: 'Actions' }).count()).toBe(0);
    expect(await main.getByRole('textbox').count()).toBe(0);
    const nav = page.getByRole('navigation', { name: 'Console' });
    expect(await nav.getByRole('link', { name: 'Invitations' }).count()).toBe(0);
    expect(await nav.getByRole('link', { name: 'Tenant events' }).count()).toBe(0);
    await checkPage(page, 'tenant-members-member');

    await page.goto(`${h.base}/console/tenant/invitations`);
    await page.getByRole('heading', { name: 'Invitations', level: 1 }).waitFor();
    await page.getByRole('alert').getByText(`this page is for admins of "${tenant.name}", and your role there is member`).waitFor();
    expect(await main.getByRole('button', { name: 'Send invitation' }).count()).toBe(0);
    await checkPage(page, 'refusal-tenant-invitations');

    await page.goto(`${h.base}/console/tenant/events`);
    await page.getByRole('alert').getByText(/this page is for admins of/).waitFor();

    await page.goto(`${h.base}/console/admin/tenants`);
    await page.getByRole('heading', { name: 'All tenants', level: 1 }).waitFor();
    await page.getByRole('alert').getByText(/this page is for platform admins/).waitFor();
    await checkPage(page, 'refusal-admin-tenants');

    // Leaving works for a member, and the console says so on the home page.
    await page.goto(`${h.base}/console/tenant`);
    await main.getByRole('heading', { name: tenant.name, level: 2 }).waitFor();
    await page.getByRole('button', { name: 'Leave this tenant' }).click();
    const dialog = page.getByRole('dialog', { name: `Leave ${tenant.name}?` });
    await checkPage(page, 'tenant-overview-leave-dialog');
    await dialog.getByRole('button', { name: 'Leave' }).click();
    await page.getByRole('heading', { name: 'Your tenants', level: 1 }).waitFor();
    await page.getByRole('status').filter({ hasText: `You left the tenant "${tenant.slug}".` }).waitFor();
    await page.getByText('You are not a member of any tenant yet.').waitFor();

    expect(tab.problems).toEqual([]);
    await tab.close();
  },
  120_000,
);
