/**
 * The provider's sign-in pages in a real browser (docs/sign-in.md#the-sign-in-page): a person
 * enters their email, reads the code from the mail (a real SMTP server), types it, chooses an
 * organization, and lands back at the product's redirect URI with a code that the product's
 * client exchanges for tokens naming that organization. Every page passes axe-core.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser } from 'playwright-core';
import { withService } from '../../src/db/tenant-scope';
import { accountForEmail } from '../../src/domain/sign-in/accounts';
import { createClient } from '../../src/domain/sign-in/clients';
import { browserIt, expectAccessible, launchChromium, screenshot } from '../helpers/console-browser';
import { closeOwnerConnection, createTenant, createUser, unique } from '../helpers/factories';
import { waitFor } from '../helpers/wait';
import { openidClient } from '../api/sign-in/provider-harness';
import { mailedCode, startPagesApp, type PagesApp } from '../api/sign-in/pages-harness';

const itBrowser = browserIt('sign-in pages');
let p: PagesApp;
let browser: Browser | null = null;
let product: http.Server;
const landed: string[] = [];

beforeAll(async () => {
  p = await startPagesApp();
  product = http.createServer((req, res) => {
    landed.push(req.url ?? '');
    res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><html lang="en"><title>Product</title><main><h1>Back at the product</h1></main></html>');
  });
  await new Promise<void>((resolve) => product.listen(0, '127.0.0.1', resolve));
});

afterAll(async () => {
  await browser?.close();
  await new Promise<void>((resolve) => product.close(() => resolve()));
  await p.close();
  await closeOwnerConnection();
});

itBrowser('email, code from the mail, organization chosen, back at the product with a code', async () => {
  browser = await launchChromium();
  const redirectUri = `http://127.0.0.1:${(product.address() as AddressInfo).port}/callback`;
  const { client } = await withService(p.db, (trx) => createClient(trx, p.config, { name: unique('app'), type: 'public', redirect_uris: [redirectUri] }));
  const oidc = await openidClient();
  const config = await oidc.discovery(new URL(p.issuer), client.client_id, undefined, oidc.None(), { execute: [oidc.allowInsecureRequests] });
  const email = `${unique('kim')}@example.test`;

  // The person has an account and two organizations (an earlier sign-in made the account).
  const { account } = await accountForEmail(p.db, email);
  const [one, two] = [await createTenant({ name: 'Acme Research' }), await createTenant({ name: 'Globex' })];
  for (const t of [one, two]) await createUser(t.id, { issuer: p.issuer, subject: account.id, email });

  const verifier = oidc.randomPKCECodeVerifier();
  const state = oidc.randomState();
  const url = oidc.buildAuthorizationUrl(config, { redirect_uri: redirectUri, scope: 'openid email', code_challenge: await oidc.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256', state });

  const page = await (await browser.newContext()).newPage();
  await page.goto(url.href);
  await page.getByLabel('Email address').waitFor();
  await expectAccessible(page, 'sign-in: email');
  await screenshot(page, 'sign-in-email');
  await page.getByLabel('Email address').fill(email);
  await page.getByRole('button', { name: 'Continue' }).click();
  await page.getByLabel('Code').waitFor({ timeout: 5000 }).catch(async (err: unknown) => {
    throw new Error(`${String(err)}\n${page.url()}\n${(await page.content()).slice(0, 1500)}`);
  });
  await expectAccessible(page, 'sign-in: code');
  await screenshot(page, 'sign-in-code');
  await page.getByLabel('Code').fill(await mailedCode(p.smtp!, email));
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Choose an organization' }).waitFor();
  await expectAccessible(page, 'sign-in: organizations');
  await screenshot(page, 'sign-in-organizations');
  await page.getByRole('button', { name: /Globex/ }).click();
  await page.getByRole('heading', { name: 'Back at the product' }).waitFor();

  const back = new URL(await waitFor('the product reached', () => landed.find((u) => u.startsWith('/callback'))), redirectUri);
  expect(back.searchParams.get('state')).toBe(state);
  const tokens = await oidc.authorizationCodeGrant(config, back, { pkceCodeVerifier: verifier, expectedState: state });
  expect(tokens.claims()).toEqual(expect.objectContaining({ sub: account.id, tenant_id: two.id, tenant: two.slug, email }));
});
