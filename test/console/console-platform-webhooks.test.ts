/**
 * The console's webhook pages in Chromium, on a database of their own (so this file's delivery
 * worker claims only its own deliveries and no other file's events reach its endpoint):
 * - creating a webhook shows its secret once, in a box with a copy button, and never again;
 * - a real receiver answers 500 then 200: the webhook's page lists both attempts;
 * - disabling and enabling it, and deleting it after the confirmation dialog.
 */
import request from 'supertest';
import { startWebhookWorker, type WebhookWorker } from '../../src/workers/webhook-delivery';
import { adminToken, unique } from '../helpers/factories';
import { browserIt, checkPage, openConsole, startConsoleHarness, type ConsoleHarness, type ConsoleTab } from '../helpers/console-browser';
import { createFreshDatabase, type FreshDatabase } from '../helpers/fresh-database';
import { startReceiver, type Receiver } from '../helpers/webhook-receiver';

const browserTest = browserIt('console-platform-webhooks.test.ts');
let fresh: FreshDatabase;
let h: ConsoleHarness;
let receiver: Receiver;
let worker: WebhookWorker | null = null;
let tab: ConsoleTab | null = null;

beforeAll(async () => {
  fresh = await createFreshDatabase('tenant_service_console_hooks');
  h = await startConsoleHarness({ SERVICE_DATABASE_URL: fresh.url, SERVICE_WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' });
  receiver = await startReceiver();
}, 240_000);

afterAll(async () => {
  await tab?.close().catch(() => undefined);
  await worker?.stop();
  await receiver?.close();
  await h?.close();
  await fresh?.drop();
}, 60_000);

/** Resolves once the endpoint's one delivery is `delivered` (bounded: the worker polls every 50 ms). */
async function delivered(webhookId: string, admin: string): Promise<void> {
  for (let i = 0; i < 300; i++) {
    const r = await request(h.t.app).get(`/api/setup/webhooks/${webhookId}/deliveries`).set('Authorization', `Bearer ${admin}`).expect(200);
    if (r.body.deliveries[0]?.status === 'delivered') return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error('the delivery was not recorded as delivered within 30 s');
}

browserTest(
  'create a webhook (its secret shown once), see every delivery attempt, disable, enable and delete it',
  async () => {
    worker = startWebhookWorker({ db: h.t.db, logger: h.t.services.logger, pollIntervalMs: 50, backoffMs: [200, 200, 200], timeoutMs: 5_000, allowPrivateNetworks: true });
    receiver.respond((n) => (n === 0 ? 500 : 200));
    const admin = adminToken();
    tab = await openConsole(h, { token: admin, path: '/admin/webhooks' });
    const { page } = tab;
    await page.getByRole('heading', { name: 'Webhooks', level: 1 }).waitFor();
    await page.getByText('No webhook yet.').waitFor();
    await checkPage(page, 'platform-webhooks-empty');

    // Mistakes first, said as sentences.
    await page.getByLabel('Receiver URL').fill('ftp://example.test/');
    await page.getByLabel('Events').fill('tenant.* Member Added');
    await page.getByRole('button', { name: 'Create the webhook' }).click();
    const alert = page.getByRole('alert');
    await alert.getByText('Enter the receiver’s address, starting with https:// (or http://).').waitFor();
    await alert.getByText(/^Member, Added are not event patterns/).waitFor();

    const description = `Console ${unique('hook')}`;
    await page.getByLabel('Receiver URL').fill(`${receiver.url}/hook`);
    await page.getByLabel('Events').fill('tenant.*');
    await page.getByLabel('Description').fill(description);
    await page.getByRole('button', { name: 'Create the webhook' }).click();
    const shown = page.getByRole('status').filter({ hasText: 'Webhook created.' });
    await shown.getByText('Copy it now: it will not be shown again.').waitFor();
    const secret = (await shown.locator('code').textContent()) ?? '';
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
    await shown.getByRole('button', { name: 'Copy the secret' }).waitFor();
    const table = page.getByRole('table', { name: 'Webhooks' });
    const row = table.getByRole('row', { name: new RegExp(description) });
    await row.getByRole('cell', { name: 'Enabled' }).waitFor();
    await checkPage(page, 'platform-webhooks-secret');

    // Gone after a reload: the service never sends it again.
    await page.reload();
    await row.waitFor();
    expect(await page.content()).not.toContain(secret);

    // One event for the endpoint: the receiver answers 500, then 200 on the retry.
    const slug = unique('hooked');
    await request(h.t.app).post('/api/setup/tenant').set('Authorization', `Bearer ${admin}`).send({ name: `Hooked ${slug}`, slug }).expect(201);
    await receiver.waitFor(2, 30_000);

    // The 200 is recorded just after the receiver answers: wait for the record, then open the page.
    const hookId = (await request(h.t.app).get('/api/setup/webhooks').set('Authorization', `Bearer ${admin}`).expect(200)).body.webhooks[0].webhook_id as string;
    await delivered(hookId, admin);

    await row.getByRole('link', { name: `${receiver.url}/hook` }).click();
    await page.getByRole('heading', { name: `Webhook ${description}`, level: 1 }).waitFor();
    const attempts = page.getByRole('table', { name: 'Delivery attempts' });
    await attempts.getByRole('cell', { name: 'Delivered' }).waitFor();
    await attempts.getByRole('rowheader', { name: /tenant\.created/ }).waitFor();
    await attempts.getByRole('cell', { name: 'HTTP 500', exact: true }).waitFor();
    await attempts.getByRole('cell', { name: 'HTTP 200', exact: true }).waitFor();
    expect(await attempts.getByRole('row').count()).toBe(3); // header, attempt 1, attempt 2
    await checkPage(page, 'platform-webhook-detail');

    // Disable, enable, from the webhook's page.
    await page.getByRole('button', { name: `Disable ${description}` }).click();
    await page.getByText('Disabled: deliveries are held').waitFor();
    await page.getByRole('status').getByText(`${description} disabled: its deliveries are held until it is enabled again.`).waitFor();
    await page.getByRole('button', { name: `Enable ${description}` }).click();
    await page.getByRole('definition').getByText('Enabled', { exact: true }).waitFor();

    // Disable from the list, then delete after the dialog.
    await page.getByRole('link', { name: 'Back to all webhooks' }).click();
    await row.getByRole('button', { name: `Disable ${description}` }).click();
    await row.getByRole('cell', { name: 'Disabled' }).waitFor();
    await row.getByRole('button', { name: `Delete ${description}` }).click();
    const dialog = page.getByRole('dialog', { name: 'Delete this webhook?' });
    await dialog.waitFor();
    await checkPage(page, 'platform-webhook-delete-dialog');
    await dialog.getByRole('button', { name: 'Delete the webhook' }).click();
    await page.getByRole('status').getByText(`Webhook ${description} deleted; its pending deliveries will not be sent.`).waitFor();
    await page.getByText('No webhook yet.').waitFor();
    const list = await request(h.t.app).get('/api/setup/webhooks').set('Authorization', `Bearer ${admin}`).expect(200);
    expect(list.body.webhooks).toEqual([]);
    expect(tab.problems).toEqual([]);
  },
  180_000,
);
