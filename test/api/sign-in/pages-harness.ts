/**
 * The sign-in pages' tests' harness: the real app on a real port with the real pages, a real SMTP
 * server for the codes, and a tenant connection that stands in for src/sso: its `start` sends the
 * browser to an "identity provider" on another port, whose callback hands the identity the test
 * chose to the pages' `SignInCompleter` (what src/sso's callbacks do after their checks).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import type { Knex } from 'knex';
import { createApp } from '../../../src/app';
import { buildServices, closeServices } from '../../../src/build-services';
import { loadConfig, type Config } from '../../../src/config';
import type { AppServices } from '../../../src/context/app-services';
import type { SignInCompleter, SsoConnector, TenantSso, UpstreamIdentity } from '../../../src/context/sign-in';
import { openDatabase } from '../../../src/db/database';
import { createLogger } from '../../../src/logger';
import { createSignInPages } from '../../../src/oidc/pages/index';
import { testEnv } from '../../helpers/app';
import { startSmtpSink, type SmtpSink } from '../../helpers/smtp-sink';
import { waitFor } from '../../helpers/wait';

export interface TestConnections {
  /** SSO settings by tenant id (absent: no connection, not required). */
  readonly tenants: Map<string, TenantSso>;
  /** What the identity provider vouches for next, by connection id (null: it fails). */
  readonly identities: Map<string, Omit<UpstreamIdentity, 'connectionId'> | null>;
  /** Connections started, in order (connection id, login hint). */
  readonly started: Array<{ connectionId: string; loginHint: string | null }>;
}

export interface PagesApp {
  base: string;
  issuer: string;
  config: Config;
  services: AppServices;
  db: Knex;
  smtp: SmtpSink | null;
  sso: TestConnections;
  close(): Promise<void>;
}

function testIdp(sso: TestConnections, completer: () => SignInCompleter): express.Express {
  const idp = express();
  // The "identity provider" signs the person in at once and sends them to the callback.
  idp.get('/authorize', (req, res) => res.redirect(303, `/callback?${new URLSearchParams(req.query as Record<string, string>).toString()}`));
  idp.get('/callback', async (req, res) => {
    const connectionId = String(req.query.connection);
    const uid = String(req.query.uid);
    const identity = sso.identities.get(connectionId);
    if (!identity) {
      await completer().failFederated(req, res, uid, { connectionId, tenantId: sso.identities.has(connectionId) ? findTenant(sso, connectionId) : null, reason: 'oidc_nonce_mismatch', detail: 'The ID token nonce did not match.' });
      return;
    }
    await completer().completeFederated(req, res, uid, { ...identity, connectionId });
  });
  return idp;
}

function findTenant(sso: TestConnections, connectionId: string): string | null {
  for (const [tenantId, s] of sso.tenants) if (s.connection?.connectionId === connectionId) return tenantId;
  return null;
}

export async function startPagesApp(opts: { smtp?: boolean; connector?: boolean } = {}): Promise<PagesApp> {
  const smtp = opts.smtp === false ? null : await startSmtpSink();
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const idpServer = http.createServer();
  await new Promise<void>((resolve) => idpServer.listen(0, '127.0.0.1', resolve));
  const idpBase = `http://127.0.0.1:${(idpServer.address() as AddressInfo).port}`;
  const config = loadConfig(
    testEnv({ SERVICE_PUBLIC_URL: base, ...(smtp ? { SERVICE_SMTP_URL: smtp.url, SERVICE_MAIL_FROM: 'Sign-in <sign-in@service.test>' } : {}) }),
  );
  const logger = createLogger('silent');
  const db = openDatabase({ url: config.databaseUrl!, poolMax: 5, logger, preparedStatements: config.databasePreparedStatements });
  const sso: TestConnections = { tenants: new Map(), identities: new Map(), started: [] };
  const connector: SsoConnector = {
    tenantSso: async (tenantId) => sso.tenants.get(tenantId) ?? { ssoRequired: false, connection: null },
    async start(res, connectionId, handoff) {
      sso.started.push({ connectionId, loginHint: handoff.loginHint });
      res.redirect(303, `${idpBase}/authorize?${new URLSearchParams({ connection: connectionId, uid: handoff.interactionUid }).toString()}`);
    },
  };
  const built = await buildServices(config, { db, logger });
  const pages = createSignInPages(config, built, { connector: opts.connector === false ? null : connector });
  const services: AppServices = { ...built, oidcInteractions: pages.interactions };
  const app = await createApp(config, services);
  server.on('request', app);
  idpServer.on('request', testIdp(sso, () => pages.completer));
  return {
    base,
    issuer: `${base}/oidc`,
    config,
    services,
    db,
    smtp,
    sso,
    async close() {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await new Promise<void>((resolve) => idpServer.close(() => resolve()));
      server.closeAllConnections?.();
      idpServer.closeAllConnections?.();
      await closeServices(services);
      await db.destroy();
      await smtp?.close();
    },
  };
}

/** The code in the newest mail to `to` (waiting for it). */
export async function mailedCode(smtp: SmtpSink, to: string, after = 0): Promise<string> {
  const mail = await waitFor(`a code mailed to ${to}`, () => smtp.messages.filter((m) => m.to.includes(to)).slice(after).at(-1));
  const m = /\b(\d{8})\b/.exec(mail.part('text/plain') ?? mail.raw);
  if (!m) throw new Error('no code in the mail');
  return m[1]!;
}
