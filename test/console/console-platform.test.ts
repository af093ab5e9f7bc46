/**
 * The platform admin's console pages in Chromium, used as a person would (by role and label):
 * - searching among 1 000 tenants and paging forward and back, the search kept in the address;
 * - creating a tenant (a refused slug said as a sentence first), editing its membership policy
 *   and identity links, previewing its deletion and deleting it with the typed slug;
 * - approving a tenant registered through the real self-service registration (approval on);
 * - the isolation audit and the event log with its filters.
 * Every page is checked by axe-core and photographed; no tab may log a problem.
 * (Webhooks: test/console/console-platform-webhooks.test.ts, on a database of its own.)
 */
import request from 'supertest';
import { adminToken, closeOwnerConnection, ownerConnection, tokenFor, unique } from '../helpers/factories';
import { browserIt, checkPage, openConsole, startConsoleHarness, type ConsoleHarness, type ConsoleTab } from '../helpers/console-browser';

const browserTest = browserIt('console-platform.test.ts');
let h: ConsoleHarness;
const tabs: ConsoleTab[] = [];
/** Slug prefixes of the tenants seeded here, removed afterwards from the shared database. */
const seeded: string[] = [];

beforeAll(async () => {
  h = await startConsoleHarness({ SERVICE_TENANT_REGISTRATION_REQUIRES_APPROVAL: 'true' });
}, 240_000);

afterAll(async () => {
  for (const t of tabs) await t.close().catch(() => undefined);
  for (const prefix of seeded) await ownerConnection()('tenants').where('slug', 'like', `${prefix}-%`).delete();
  await h?.close();
  await closeOwnerConnection();
}, 60_000);

async function signIn(path: string, token = adminToken()): Promise<ConsoleTab> {
  const tab = await openConsole(h, { token, path });
  tabs.push(tab);
  return tab;
}

async function apiTenant(id: string): Promise<request.Response> {
  return request(h.t.app).get(`/api/setup/tenant/${id}`).set('Authorization', `Bearer ${adminToken()}`);
}

browserTest(
  'search among 1 000 tenants, page forward and back, and the search survives a reload and back',
  async () => {
    // One multi-row insert; created_at one second apart so the API's order (created_at, id) is known.
    const prefix = unique('pl');
    const base = Date.now() - 3_600_000;
    seeded.push(prefix);
    await ownerConnection()('tenants').insert(
      Array.from({ length: 1000 }, (_, i) => {
        const n = String(i + 1).padStart(4, '0');
        const at = new Date(base + i * 1000);
        return { name: `Seeded ${prefix} ${n}`, slug: `${prefix}-${n}`, status: 'active', settings: '{}', created_at: at, updated_at: at };
      }),
    );
    const tab = await signIn('/admin/tenants');
    const { page } = tab;
    await page.getByRole('heading', { name: 'All tenants', level: 1 }).waitFor();
    await page.getByRole('table', { name: 'Tenants' }).waitFor();
    await checkPage(page, 'platform-tenants');

    await page.getByLabel('Search tenants').fill(prefix);
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    await page.getByText('1,000 tenants match').waitFor();
    expect(new URL(page.url()).searchParams.get('q')).toBe(prefix);
    const table = page.getByRole('table', { name: 'Tenants' });
    await table.getByRole('link', { name: `Seeded ${prefix} 0001`, exact: true }).waitFor();
    expect(await table.getByRole('row').count()).toBe(101); // the header row and 100 tenants
    await page.getByText('Page 1 · tenants 1–100 of 1,000').waitFor();
    await checkPage(page, 'platform-tenants-search');

    await page.getByRole('button', { name: 'Next page' }).click();
    await table.getByRole('link', { name: `Seeded ${prefix} 0101`, exact: true }).waitFor();
    await page.getByRole('button', { name: 'Next page' }).click();
    await table.getByRole('link', { name: `Seeded ${prefix} 0201`, exact: true }).waitFor();
    await page.getByText('Page 3 · tenants 201–300 of 1,000').waitFor();
    expect(await table.getByRole('link', { name: `Seeded ${prefix} 0101`, exact: true }).count()).toBe(0);
    await page.getByRole('button', { name: 'Previous page' }).click();
    await table.getByRole('link', { name: `Seeded ${prefix} 0101`, exact: true }).waitFor();
    await page.getByRole('button', { name: 'Previous page' }).click();
    await table.getByRole('link', { name: `Seeded ${prefix} 0001`, exact: true }).waitFor();
    expect(await page.getByRole('button', { name: 'Previous page' }).isDisabled()).toBe(true);

    // A narrower search, from the keyboard: exactly one tenant, no next page.
    await page.getByLabel('Search tenants').fill(`${prefix}-0999`);
    await page.getByLabel('Search tenants').press('Enter');
    await page.getByText(`1 tenant matches “${prefix}-0999”`).waitFor();
    expect(await table.getByRole('row').count()).toBe(2);
    expect(await page.getByRole('button', { name: 'Next page' }).isDisabled()).toBe(true);

    // Reload keeps the search (it is in the address); back returns to the previous search.
    await page.reload();
    await page.getByText(`1 tenant matches “${prefix}-0999”`).waitFor();
    expect(await page.getByLabel('Search tenants').inputValue()).toBe(`${prefix}-0999`);
    await page.goBack();
    await page.getByText('1,000 tenants match').waitFor();
    expect(await page.getByLabel('Search tenants').inputValue()).toBe(prefix);

    // The name links to the tenant's page.
    await table.getByRole('link', { name: `Seeded ${prefix} 0001`, exact: true }).click();
    await page.getByRole('heading', { name: `Tenant Seeded ${prefix} 0001`, level: 1 }).waitFor();
    expect(tab.problems).toEqual([]);
  },
  180_000,
);

browserTest(
  'create a tenant, edit its membership policy and identity links, preview its deletion and delete it with the typed slug',
  async () => {
    const tab = await signIn('/admin/tenants');
    const { page } = tab;
    await page.getByRole('link', { name: 'Create a tenant' }).click();
    await page.getByRole('heading', { name: 'Create a tenant', level: 1 }).waitFor();
    await checkPage(page, 'platform-new-tenant');

    // Mistakes are said as sentences, and nothing is created.
    const name = `Console ${unique('co')}`;
    await page.getByLabel('Name', { exact: true }).fill(name);
    const slug = await page.getByLabel('Slug', { exact: true }).inputValue();
    expect(slug).toBe(name.toLowerCase().replace(/[^a-z0-9]+/g, '-'));
    await page.getByLabel('Slug', { exact: true }).fill('Not A Slug');
    await page.getByLabel('Settings (JSON object)').fill('{"billing_plan": ');
    await page.getByRole('button', { name: 'Create the tenant' }).click();
    const alert = page.getByRole('alert');
    await alert.getByText('A slug may hold only lowercase letters (a–z), digits and hyphens, at most 255 of them.').waitFor();
    await alert.getByText(/^Settings are not valid JSON/).waitFor();
    await checkPage(page, 'platform-new-tenant-invalid');

    // A slug that exists is the service's 409, shown as its sentence.
    const taken = await ownerConnection()('tenants').insert({ name: 'Taken', slug: unique('taken'), settings: '{}' }).returning(['slug']);
    const takenSlug = (taken[0] as { slug: string }).slug;
    await page.getByLabel('Slug', { exact: true }).fill(takenSlug);
    await page.getByLabel('Settings (JSON object)').fill('{"billing_plan": "free"}');
    await page.getByRole('button', { name: 'Create the tenant' }).click();
    await page.getByRole('alert').getByText(`The tenant was not created: A tenant with slug '${takenSlug}' already exists.`).waitFor();
    await page.getByRole('alert').getByText(/^Request ID: /).waitFor();
    await ownerConnection()('tenants').where({ slug: takenSlug }).delete();

    await page.getByLabel('Slug', { exact: true }).fill(slug);
    await page.getByRole('button', { name: 'Create the tenant' }).click();
    await page.getByRole('heading', { name: `Tenant ${name}`, level: 1 }).waitFor();
    await page.getByRole('status').getByText(`Tenant ${name} created.`).waitFor();
    const id = new URL(page.url()).pathname.split('/').pop()!;
    const created = await apiTenant(id);
    expect(created.status).toBe(200);
    expect(created.body).toMatchObject({ name, slug, settings: { billing_plan: 'free' }, status: 'active' });
    await checkPage(page, 'platform-tenant-detail');

    // Membership policy: invitation only, from one issuer, roles from the token.
    await page.getByLabel('Let a token that names this tenant make its holder a member').uncheck();
    await page.getByLabel('Only tokens from this issuer').fill('https://idp.example.test/');
    await page.getByLabel("Take each member's role from the token's role claim").check();
    await page.getByRole('button', { name: 'Save membership policy' }).click();
    await page.getByRole('status').getByText('Membership policy saved.').waitFor();
    expect((await apiTenant(id)).body.membership_policy).toEqual({ provision_from_claims: false, claims_issuer: 'https://idp.example.test/', roles_from_claims: true });

    // Identity links: one link added; a half-filled one is refused as a sentence first.
    await page.getByRole('button', { name: 'Add an identity link' }).click();
    await page.getByLabel('Issuer of link 1').fill('https://idp.example.test/');
    await page.getByRole('button', { name: 'Save identity links' }).click();
    await page.getByRole('alert').getByText('Identity link 1 needs both an issuer and an organization ID.').waitFor();
    const org = unique('org');
    await page.getByLabel('Organization ID of link 1').fill(org);
    await page.getByRole('button', { name: 'Save identity links' }).click();
    await page.getByRole('status').getByText('Identity links saved.').waitFor();
    expect((await apiTenant(id)).body.identity_links).toEqual([{ issuer: 'https://idp.example.test/', organization_id: org }]);

    // Details: a new name, kept after a reload.
    await page.getByLabel('Name', { exact: true }).fill(`${name} renamed`);
    await page.getByRole('button', { name: 'Save details' }).click();
    await page.getByRole('heading', { name: `Tenant ${name} renamed`, level: 1 }).waitFor();
    await page.reload();
    await page.getByRole('heading', { name: `Tenant ${name} renamed`, level: 1 }).waitFor();
    expect(await page.getByLabel('Only tokens from this issuer').inputValue()).toBe('https://idp.example.test/');
    await checkPage(page, 'platform-tenant-detail-edited');

    // Delete: the preview first, then the dialog that wants the slug typed.
    await page.getByRole('button', { name: 'Preview the deletion' }).click();
    const preview = page.getByRole('table', { name: `What deleting ${name} renamed removes now` });
    await preview.waitFor();
    expect(await preview.getByRole('row', { name: /In all/ }).textContent()).toMatch(/In all\s*\d/);
    await checkPage(page, 'platform-tenant-delete-preview');
    await page.getByRole('button', { name: 'Delete tenant…' }).click();
    const dialog = page.getByRole('dialog', { name: `Delete ${name} renamed?` });
    await dialog.waitFor();
    await page.keyboard.press('Escape'); // the keyboard's way out deletes nothing
    await dialog.waitFor({ state: 'hidden' });
    expect((await apiTenant(id)).status).toBe(200);
    await page.getByRole('button', { name: 'Delete tenant…' }).click();
    await dialog.waitFor();
    const confirm = dialog.getByRole('button', { name: 'Delete the tenant' });
    expect(await confirm.isDisabled()).toBe(true);
    await dialog.getByLabel(`Type ${slug} to confirm`).fill(`${slug}-wrong`);
    expect(await confirm.isDisabled()).toBe(true);
    await checkPage(page, 'platform-tenant-delete-dialog');
    await dialog.getByLabel(`Type ${slug} to confirm`).fill(slug);
    await confirm.click();
    await page.getByRole('heading', { name: 'All tenants', level: 1 }).waitFor();
    await page.getByRole('status').getByText(`Tenant ${name} renamed (${slug}) deleted, with all its rows.`).waitFor();
    expect((await apiTenant(id)).status).toBe(404);
    expect(tab.problems).toEqual([]);
  },
  180_000,
);

browserTest(
  'a tenant registered through self-service waits for approval, and a platform admin approves it from the list or its page',
  async () => {
    const register = async (orgName: string) => {
      const sub = unique('founder');
      const r = await request(h.t.app)
        .post('/api/tenants/register')
        .set('Authorization', `Bearer ${tokenFor({ sub, email: `${sub}@example.test` })}`)
        .send({ organization_name: orgName, admin_email: `${sub}@example.test`, include_sample_data: false });
      expect(r.status).toBe(201);
      const slug = (r.body as { tenant_slug: string }).tenant_slug;
      expect((r.body as { status: string }).status).toBe('pending_approval');
      const row = await ownerConnection()('tenants').where({ slug }).first<{ id: string; status: string }>('id', 'status');
      expect(row?.status).toBe('pending_approval');
      return { slug, id: row!.id };
    };
    const mark = unique('pend');
    const first = await register(`Pending ${mark} one`);
    const second = await register(`Pending ${mark} two`);

    const tab = await signIn(`/admin/tenants?q=${encodeURIComponent(mark)}`);
    const { page } = tab;
    const table = page.getByRole('table', { name: 'Tenants' });
    await table.getByRole('row', { name: new RegExp(`Pending ${mark} one`) }).getByText('Waiting for approval').waitFor();
    await checkPage(page, 'platform-tenants-pending');
    await page.getByRole('button', { name: `Approve Pending ${mark} one` }).click();
    await page.getByRole('status').getByText(`Tenant Pending ${mark} one approved: its members can use it now.`).waitFor();
    await table.getByRole('row', { name: new RegExp(`Pending ${mark} one`) }).getByRole('cell', { name: 'Active' }).waitFor();
    expect((await apiTenant(first.id)).body.status).toBe('active');

    // The other from its page.
    await table.getByRole('link', { name: `Pending ${mark} two` }).click();
    await page.getByRole('heading', { name: `Tenant Pending ${mark} two`, level: 1 }).waitFor();
    await page.getByText('Waiting for approval.').waitFor();
    await page.getByRole('button', { name: 'Approve this tenant' }).click();
    await page.getByRole('status').getByText(`Tenant Pending ${mark} two approved: its members can use it now.`).waitFor();
    expect((await apiTenant(second.id)).body.status).toBe('active');
    // The details form now shows the new status (never sending the old one back).
    expect(await page.getByLabel('Status').inputValue()).toBe('active');
    expect(tab.problems).toEqual([]);
  },
  120_000,
);

browserTest(
  'the isolation audit, of all tenants and of one, and the event log with its filters',
  async () => {
    const admin = adminToken();
    const slug = unique('evt');
    const made = await request(h.t.app).post('/api/setup/tenant').set('Authorization', `Bearer ${admin}`).send({ name: `Events ${slug}`, slug });
    expect(made.status).toBe(201);
    const tenantId = (made.body as { tenant_id: string }).tenant_id;
    await request(h.t.app).put(`/api/setup/tenant/${tenantId}`).set('Authorization', `Bearer ${admin}`).send({ settings: { billing_plan: 'pro' } }).expect(200);

    const tab = await signIn('/admin/tenants', admin);
    const { page } = tab;
    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Isolation audit' }).click();
    await page.getByRole('heading', { name: 'Isolation audit', level: 1 }).waitFor();
    await page.getByRole('table', { name: /^Rows per table, all/ }).waitFor();
    await checkPage(page, 'platform-audit');
    await page.getByLabel('Tenant slug').fill('Not a slug');
    await page.getByRole('button', { name: 'Run the audit' }).click();
    await page.getByRole('alert').getByText(/A slug may hold only lowercase letters/).waitFor();
    await page.getByLabel('Tenant slug').fill(slug);
    await page.getByRole('button', { name: 'Run the audit' }).click();
    await page.getByRole('table', { name: `Rows per table of Events ${slug}` }).waitFor();
    await page.getByText('No isolation violation in 1 tenant.').waitFor();
    expect(new URL(page.url()).searchParams.get('tenant_slug')).toBe(slug);
    await checkPage(page, 'platform-audit-one');

    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Event log' }).click();
    await page.getByRole('heading', { name: 'Event log', level: 1 }).waitFor();
    await page.getByRole('table', { name: 'Events' }).waitFor();
    await checkPage(page, 'platform-events');

    // A tenant ID that is not one is said before asking.
    await page.getByLabel('Tenant ID').fill('not-an-id');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.getByRole('alert').getByText(/A tenant ID looks like/).waitFor();

    // A new filter replaces the table in the same render as the address changes: after the
    // address, every row seen is the filtered page's.
    await page.getByLabel('Tenant ID').fill(tenantId);
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.waitForURL(/tenant_id=/);
    const events = page.getByRole('table', { name: 'Events' });
    await events.getByRole('row', { name: /tenant\.updated/ }).waitFor();
    await events.getByRole('row', { name: /tenant\.created/ }).waitFor();
    expect(await events.getByRole('row').count()).toBe(3);

    await page.getByLabel('Action').fill('tenant.updated');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.waitForURL(/action=tenant\.updated/);
    const row = events.getByRole('row', { name: /tenant\.updated/ });
    await row.waitFor();
    expect(await events.getByRole('row').count()).toBe(2);
    await row.getByText('(platform admin)').waitFor();
    await row.getByText('Data of tenant.updated').click();
    expect(await row.locator('pre').textContent()).toContain('"pro"');

    // The actor filter, and a time range that ends before the events: nothing.
    const sub = JSON.parse(Buffer.from(admin.split('.')[1]!, 'base64url').toString('utf8')).sub as string;
    await page.getByLabel('Actor subject').fill(sub);
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.waitForURL(/actor_subject=/);
    await events.getByRole('row', { name: /tenant\.updated/ }).waitFor();
    await checkPage(page, 'platform-events-filtered');
    await page.getByLabel('Until').fill('2020-01-01T00:00');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.getByText('No event matches these filters.').waitFor();
    await page.reload();
    await page.getByText('No event matches these filters.').waitFor();
    expect(await page.getByLabel('Action').inputValue()).toBe('tenant.updated');
    await page.getByRole('button', { name: 'Clear filters' }).click();
    await page.getByRole('table', { name: 'Events' }).waitFor();
    expect(tab.problems).toEqual([]);
  },
  120_000,
);
