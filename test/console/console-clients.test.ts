/**
 * The console's Applications pages in Chromium (docs/sign-in.md#clients), on a database of their
 * own (the product has no application yet; the console's own client is always listed):
 * - registering: mistakes said as sentences, the service's refusal shown, then a confidential
 *   client whose secret is shown once with copy buttons, and never again after a reload;
 * - editing name and redirect URIs, rotating the secret after a confirmation (a new one, once);
 * - deleting after a confirmation; a built-in client has no delete; non-admins are turned away.
 */
import request from 'supertest';
import { createClient } from '../../src/domain/sign-in/clients';
import { withService } from '../../src/db/tenant-scope';
import { adminToken, tokenFor, unique } from '../helpers/factories';
import { browserIt, checkPage, clipboardText, openConsole, startConsoleHarness, type ConsoleHarness, type ConsoleTab } from '../helpers/console-browser';
import { createFreshDatabase, type FreshDatabase } from '../helpers/fresh-database';

const browserTest = browserIt('console-clients.test.ts');
let fresh: FreshDatabase;
let h: ConsoleHarness;
let tab: ConsoleTab | null = null;

beforeAll(async () => {
  fresh = await createFreshDatabase('tenant_service_console_clients');
  h = await startConsoleHarness({ SERVICE_DATABASE_URL: fresh.url });
}, 240_000);

afterAll(async () => {
  await tab?.close().catch(() => undefined);
  await h?.close();
  await fresh?.drop();
}, 60_000);

browserTest(
  'register an application (its secret shown once), edit it, rotate its secret, delete it',
  async () => {
    const admin = adminToken();
    const api = (path: string) => request(h.t.app).get(path).set('Authorization', `Bearer ${admin}`);
    tab = await openConsole(h, { token: admin, path: '/admin/applications', clipboard: true });
    const { page } = tab;
    await page.getByRole('heading', { name: 'Applications', level: 1 }).waitFor();
    await page.getByText('No application yet.').waitFor();
    await checkPage(page, 'platform-applications-empty');

    // Mistakes first, said as sentences; then the service's own refusal.
    await page.getByRole('button', { name: 'Register the application' }).click();
    const alert = page.getByRole('alert');
    await alert.getByText('Enter a name: what admins and people see.').waitFor();
    await alert.getByText('Enter at least one redirect URI.').waitFor();
    await page.getByLabel('Name', { exact: true }).fill('Portal');
    await page.getByLabel('Redirect URIs', { exact: true }).fill('http://portal.example.com/cb');
    await page.getByRole('button', { name: 'Register the application' }).click();
    await page.getByRole('alert').getByText(/The application was not registered.*body\.redirect_uris\[0\] uses http: on a host that is not loopback/).waitFor();
    // Nothing registered: only the service's own built-in client is there.
    expect(((await api('/api/setup/clients').expect(200)).body.clients as Array<{ built_in: boolean }>).filter((c) => !c.built_in)).toEqual([]);

    await page.getByLabel('Redirect URIs', { exact: true }).fill('https://portal.example.com/cb\n\nhttp://127.0.0.1:3000/cb\n');
    await page.getByRole('button', { name: 'Register the application' }).click();
    const shown = page.getByRole('status').filter({ hasText: 'Portal registered.' });
    await shown.getByText('Copy the client secret now: it will not be shown again.').waitFor();
    const secret = await shown.getByLabel('Client secret').inputValue();
    const clientId = await shown.getByLabel('Client ID').inputValue();
    expect(secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
    await shown.getByRole('button', { name: 'Copy the client secret' }).click();
    await shown.getByText('Copied.').waitFor();
    expect(await clipboardText(page)).toBe(secret);
    const row = page.getByRole('table', { name: 'Applications' }).getByRole('row', { name: /Portal/ });
    await row.getByRole('cell', { name: 'Confidential' }).waitFor();
    await row.getByText('http://127.0.0.1:3000/cb').waitFor();
    await checkPage(page, 'platform-applications-secret');
    expect((await api(`/api/setup/clients/${clientId}`).expect(200)).body).toMatchObject({ name: 'Portal', redirect_uris: ['https://portal.example.com/cb', 'http://127.0.0.1:3000/cb'] });

    // Gone after a reload: the service never sends it again.
    await page.reload();
    await row.waitFor();
    expect(await page.content()).not.toContain(secret);

    // Edit on the application's page.
    await row.getByRole('link', { name: 'Portal' }).click();
    await page.getByRole('heading', { name: 'Application Portal', level: 1 }).waitFor();
    await page.getByLabel('Name', { exact: true }).fill('Customer portal');
    await page.getByLabel('Post-logout redirect URIs').fill('https://portal.example.com/');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.getByRole('status').getByText('Customer portal saved.').waitFor();
    await page.getByRole('heading', { name: 'Application Customer portal', level: 1 }).waitFor();
    expect((await api(`/api/setup/clients/${clientId}`).expect(200)).body).toMatchObject({ name: 'Customer portal', post_logout_redirect_uris: ['https://portal.example.com/'] });
    await checkPage(page, 'platform-application-detail');

    // Rotate after the dialog: a new secret, once.
    await page.getByRole('button', { name: 'Rotate the secret' }).click();
    const rotate = page.getByRole('dialog', { name: 'Rotate the client secret?' });
    await rotate.getByText(/replaces the old one/).waitFor();
    await rotate.getByRole('button', { name: 'Rotate the secret' }).click();
    const again = page.getByRole('status').filter({ hasText: 'New secret made; the old one no longer works.' });
    const fresher = await again.getByLabel('Client secret').inputValue();
    expect(fresher).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(fresher).not.toBe(secret);
    await again.getByRole('button', { name: 'I have stored the secret' }).click();
    await again.waitFor({ state: 'detached' });

    // Delete after the dialog: back on the list, which is empty.
    await page.getByRole('button', { name: 'Delete Customer portal' }).click();
    const dialog = page.getByRole('dialog', { name: 'Delete this application?' });
    await dialog.waitFor();
    await checkPage(page, 'platform-application-delete-dialog');
    await dialog.getByRole('button', { name: 'Delete the application' }).click();
    await page.getByRole('status').getByText('Application Customer portal deleted: it can no longer sign anyone in.').waitFor();
    await page.getByText('No application yet.').waitFor();
    await api(`/api/setup/clients/${clientId}`).expect(404);

    // A built-in client is listed, without a delete button or an edit link.
    const builtIn = unique('console').replace(/[^A-Za-z0-9_-]/g, '');
    await withService(h.t.db, (trx) => createClient(trx, h.t.config, { name: 'Built-in console', type: 'public', redirect_uris: [`${h.base}/console/callback`] }, { clientId: builtIn, builtIn: true }));
    await page.reload();
    const builtInRow = page.getByRole('row', { name: /Built-in console/ });
    await builtInRow.getByRole('cell', { name: 'Built in', exact: true }).waitFor();
    expect(await builtInRow.getByRole('button').count()).toBe(0);
    expect(await builtInRow.getByRole('link').count()).toBe(0);
    expect(tab.problems).toEqual([]);
  },
  180_000,
);

browserTest(
  'a person who is not a platform admin is turned away',
  async () => {
    const person = await openConsole(h, { token: tokenFor({ sub: unique('person') }), path: '/admin/applications' });
    try {
      await person.page.getByRole('alert').getByText(/this page is for platform admins/).waitFor();
      expect(await person.page.getByRole('button', { name: 'Register the application' }).count()).toBe(0);
    } finally {
      await person.close();
    }
  },
  60_000,
);
