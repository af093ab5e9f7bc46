/**
 * Roles and permissions in the console (docs/roles.md), in Chromium: a platform admin defines a
 * permission; a tenant admin builds the tenant's own role from it and gives it to a member, the
 * role picker saying what each role allows; the gateway decision for that permission changes
 * from refused to admitted. Every page is checked with axe.
 */
import { adminToken, closeOwnerConnection, createTenant, createUser, tokenFor, unique } from '../helpers/factories';
import { browserIt, checkPage, openConsole, startConsoleHarness, type ConsoleHarness } from '../helpers/console-browser';

const browserTest = browserIt('console-roles.test.ts');
let h: ConsoleHarness;

beforeAll(async () => {
  h = await startConsoleHarness();
}, 240_000);

afterAll(async () => {
  await h?.close();
  await closeOwnerConnection();
}, 60_000);

browserTest(
  'define a permission, build a tenant role from it, give it to a member, and the decision changes',
  async () => {
    const tenant = await createTenant();
    const admin = await createUser(tenant.id, { role: 'admin' });
    const member = await createUser(tenant.id, { role: 'member', email: `${unique('bob')}@example.test` });
    const permission = `${unique('inv').replace('-', '')}:write`;
    const roleKey = unique('accountant');
    const decide = () =>
      fetch(`${h.base}/api/tenant/decision?permission=${encodeURIComponent(permission)}`, {
        headers: { Authorization: `Bearer ${tokenFor({ sub: member.subject, email: member.email })}`, 'X-Tenant': tenant.slug },
      });
    expect((await decide()).status).toBe(403);

    // The platform admin defines the permission.
    const platform = await openConsole(h, { token: adminToken(), path: '/admin/permissions' });
    const p = platform.page;
    await p.getByRole('heading', { name: 'Permissions', level: 1 }).waitFor();
    await p.getByLabel('Key').fill(permission);
    await p.getByLabel('Description').fill('Create invoices');
    await p.getByRole('button', { name: 'Define permission' }).click();
    await p.getByRole('status').filter({ hasText: `Permission ${permission} defined.` }).waitFor();
    await p.getByRole('table', { name: 'Permissions' }).getByRole('cell', { name: permission, exact: true }).waitFor();
    await checkPage(p, 'roles-permissions');
    expect(platform.problems).toEqual([]);
    await platform.close();

    // The tenant's admin builds a role of the tenant's own from it…
    const tab = await openConsole(h, { token: tokenFor({ sub: admin.subject, email: admin.email }), tenant: tenant.slug, path: '/tenant/roles' });
    const { page } = tab;
    await page.getByRole('heading', { name: 'Roles', level: 1 }).waitFor();
    await page.getByLabel('Key').fill(roleKey);
    await page.getByLabel('Name').fill('Accountant');
    await page.getByLabel('Permissions').fill(permission);
    await page.getByRole('button', { name: 'Create role' }).click();
    await page.getByRole('status').filter({ hasText: `Role ${roleKey} created.` }).waitFor();
    const own = page.getByRole('table', { name: "This tenant's roles" });
    await own.getByRole('cell', { name: permission, exact: true }).waitFor();
    await checkPage(page, 'roles-tenant');

    // …and gives it to the member: the picker says what each role allows.
    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Members' }).click();
    await page.getByRole('heading', { name: 'Members', level: 1 }).waitFor();
    const picker = page.getByLabel(`Role of ${member.email}`);
    await picker.getByRole('option', { name: `${roleKey} — ${permission}` }).waitFor({ state: 'attached' });
    await picker.selectOption(roleKey);
    await page.getByRole('status').filter({ hasText: `${member.email} now has the role ${roleKey}.` }).waitFor();
    await page.getByRole('row').filter({ hasText: member.email }).getByRole('cell', { name: permission, exact: true }).waitFor();
    await checkPage(page, 'roles-members');

    const admitted = await decide();
    expect(admitted.status).toBe(200);
    expect(admitted.headers.get('x-tenant-permissions')).toBe(permission);
    expect(tab.problems).toEqual([]);
    await tab.close();
  },
  180_000,
);
