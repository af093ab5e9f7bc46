/**
 * The tenant page's lifecycle in Chromium, used as a person would (by role and label): suspend
 * with a reason (the state and reason shown), reactivate, schedule a deletion and cancel it,
 * download the export; a member sees their tenant suspended in their list. Every page is checked
 * by axe-core and photographed; no tab may log a problem.
 */
import fs from 'node:fs';
import { closeOwnerConnection, createTenant, createUser, ownerConnection, adminToken, tokenFor } from '../helpers/factories';
import { browserIt, checkPage, openConsole, startConsoleHarness, type ConsoleHarness, type ConsoleTab } from '../helpers/console-browser';

const browserTest = browserIt('console-lifecycle.test.ts');
let h: ConsoleHarness;
const tabs: ConsoleTab[] = [];

beforeAll(async () => {
  h = await startConsoleHarness();
}, 240_000);
afterAll(async () => {
  for (const t of tabs) await t.close().catch(() => undefined);
  await h?.close();
  await closeOwnerConnection();
}, 60_000);

const statusOf = async (id: string) => ((await ownerConnection()('tenants').where({ id }).first('status')) as { status: string }).status;

browserTest(
  'suspend with a reason, reactivate, schedule and cancel a deletion, download the export; a member sees the suspension',
  async () => {
    const tenant = await createTenant({ name: 'Lifecycle Corp' });
    const member = await createUser(tenant.id, { role: 'member' });
    const tab = await openConsole(h, { token: adminToken(), path: `/admin/tenants/${tenant.id}` });
    tabs.push(tab);
    const { page } = tab;
    await page.getByRole('heading', { name: 'Tenant Lifecycle Corp', level: 1 }).waitFor();

    await page.getByRole('button', { name: 'Suspend this tenant' }).click();
    await page.getByText('Say why the tenant is suspended').waitFor();
    await page.getByLabel('Reason for the suspension').fill('Invoice 2026-10 unpaid');
    await page.getByRole('button', { name: 'Suspend this tenant' }).click();
    await page.getByText('Reason (platform admins only): Invoice 2026-10 unpaid').waitFor();
    expect(await statusOf(tenant.id)).toBe('suspended');
    await checkPage(page, 'platform-tenant-suspended');

    const memberTab = await openConsole(h, { token: tokenFor({ sub: member.subject, email: member.email }), path: '/' });
    tabs.push(memberTab);
    await memberTab.page.getByRole('cell', { name: 'Suspended', exact: true }).waitFor();
    await memberTab.page.getByText('A suspended tenant (or one scheduled for deletion) keeps its data').waitFor();
    expect(await memberTab.page.content()).not.toContain('Invoice 2026-10 unpaid');
    await checkPage(memberTab.page, 'member-tenant-suspended');

    await page.getByRole('button', { name: 'Reactivate this tenant' }).click();
    await page.getByText('reactivated: its members can use it again').waitFor();
    expect(await statusOf(tenant.id)).toBe('active');

    await page.getByLabel('Grace period in days (1–90)').fill('91');
    await page.getByText('Enter a whole number of days from 1 to 90.').waitFor();
    await page.getByLabel('Grace period in days (1–90)').fill('14');
    await page.getByRole('button', { name: 'Schedule the deletion' }).click();
    await page.getByRole('button', { name: 'Cancel the deletion' }).waitFor();
    expect(await statusOf(tenant.id)).toBe('pending_deletion');
    await checkPage(page, 'platform-tenant-pending-deletion');
    await page.getByRole('button', { name: 'Cancel the deletion' }).click();
    await page.getByText('is cancelled; it is active again').waitFor();
    expect(await statusOf(tenant.id)).toBe('active');

    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download the export' }).click()]);
    expect(download.suggestedFilename()).toBe(`tenant-${tenant.slug}.ndjson`);
    const file = fs.readFileSync((await download.path())!, 'utf8');
    expect(file.trim().split('\n').at(-1)).toMatch(/^\{"type":"end"/);
    expect(file).toContain(member.subject);

    expect(tab.problems).toEqual([]);
    expect(memberTab.problems).toEqual([]);
  },
  180_000,
);
