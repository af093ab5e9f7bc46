/**
 * The provider's sign-in pages (docs/sign-in.md#the-sign-in-page), mounted at
 * `/oidc/interaction` (req.url is `/<uid>…` there), and the `SignInCompleter` the tenants'
 * connections hand their results to.
 *
 *   GET  /<uid>                   organization or login_hint → the tenant's connection; else the email page
 *   POST /<uid>/email             email → its tenant's connection; else a code by mail, the code page
 *   POST /<uid>/code              the code → the account → the organization (chosen, or the only one)
 *   POST /<uid>/organization      the organization chosen on the list
 *   POST /<uid>/sso/<tenant id>   a tenant requiring SSO, chosen on the list → its connection
 *   GET  /<uid>/sso?handback=<id> back from a connection (with the interaction's cookie) → the tenant
 *
 * Every step reads the interaction through its cookie (SameSite=Lax, bound to the browser), so a
 * uid alone reaches nothing; forms are read only from the same origin. Whatever goes wrong, the
 * person gets a page (or the client a protocol error), never a stack trace.
 */
import express, { type Request, type RequestHandler, type Response } from 'express';
import type { Config } from '../../config';
import type { AppServices } from '../../context/app-services';
import type { FederatedFailure, InteractionRouterFactory, Oidc, SignInCompleter, SsoConnector, UpstreamIdentity } from '../../context/sign-in';
import { accountForEmail, accountForUpstream } from '../../domain/sign-in/accounts';
import { checkEmailCode, CODE_DIGITS, CODE_TTL_SECONDS, issueEmailCode, normalizeCode, normalizeEmail } from '../../domain/sign-in/email-codes';
import { emailIdentified, rememberIdentified, takeIdentified } from '../../domain/sign-in/handbacks';
import { findOrganization } from '../../domain/sign-in/organizations';
import { withTenant } from '../../db/tenant-scope';
import { createSignInCodeMailer, type SignInCodeMailer } from '../../mail/sign-in-code-mail';
import { outsideSignInSlot } from '../../http/sign-in-work';
import { admitToTenant, recordFailure } from '../../tenancy/sign-in-admission';
import { codePage, emailPage } from './html';
import { field, formBody, requestReference, sendError, sendPage } from './respond';
import { abort, chooseOrganization, enter, toConnection, type PagesContext } from './steps';
import { organizationSwitch } from './switch';

export interface SignInPagesOptions {
  /** The tenants' connections (src/sso); null: no connection applies anywhere. */
  readonly connector: SsoConnector | null;
  /** Default: the service's SMTP (SERVICE_SMTP_URL). */
  readonly mailer?: SignInCodeMailer;
}

export interface SignInPages {
  /** For `createOidc` (services.oidcInteractions). */
  readonly interactions: InteractionRouterFactory;
  /** For the connections' callbacks (services.signInCompleter). */
  readonly completer: SignInCompleter;
}

const UID = /^[A-Za-z0-9_-]{1,100}$/;
const EXPIRED = 'This sign-in has expired or was started in another browser. Go back to the application and sign in again.';

type Interaction = Awaited<ReturnType<Oidc['interactionDetails']>>;

function param(i: Interaction, name: string): string | null {
  const v = (i.params as Record<string, unknown>)[name];
  return typeof v === 'string' && v.length > 0 && v.length <= 320 ? v : null;
}

export function createSignInPages(config: Config, services: AppServices, opts: SignInPagesOptions): SignInPages {
  let bound: Oidc | null = null;
  const oidc = (): Oidc => {
    if (!bound) throw new Error('the sign-in pages are not mounted on a provider');
    return bound;
  };
  const mailer = opts.mailer ?? createSignInCodeMailer(config);
  const pc = (): PagesContext => ({ config, services, connector: opts.connector, mailer, oidc, base: `${new URL(oidc().issuer).pathname.replace(/\/+$/, '')}/interaction` });
  const log = services.logger.child({ component: 'sign-in-pages' });

  /** Runs a step with the interaction of the request's cookie, which must be `:uid`'s. */
  const step =
    (run: (p: PagesContext, req: Request, res: Response, i: Interaction) => Promise<void>): RequestHandler =>
    async (req, res) => {
      try {
        const uid = req.params.uid;
        if (typeof uid !== 'string' || !UID.test(uid)) return sendError(res, 404, 'Sign-in not found', EXPIRED);
        let i: Interaction;
        try {
          i = await oidc().interactionDetails(req, res);
        } catch (err) {
          if ((err as { name?: string }).name === 'SessionNotFound') return sendError(res, 400, 'Sign-in expired', EXPIRED);
          throw err;
        }
        if (i.uid !== uid) return sendError(res, 400, 'Sign-in expired', EXPIRED);
        await run(pc(), req, res, i);
      } catch (err) {
        log.error({ err, request_id: requestReference(res) }, 'Sign-in page failed');
        if (!res.headersSent) sendError(res, 500, 'Sign-in failed', 'The sign-in could not continue; try again in a moment.');
      }
    };

  const emailForm = (p: PagesContext, uid: string, extra: { email?: string | null; error?: string | null } = {}) =>
    emailPage({ action: `${p.base}/${uid}/email`, emailCodes: p.mailer.configured, ...extra });

  const start = step(async (p, req, res, i) => {
    const organization = param(i, 'organization');
    const hint = normalizeEmail(param(i, 'login_hint'));
    if (i.session?.accountId) {
      // Signed in already (another organization, or a grant to renew): no email asked again.
      const target = organization ? await findOrganization(p.services.db, organization) : null;
      if (organization && !target) return abort(p, req, res, 'access_denied', 'There is no such organization.');
      if (target) {
        const sso = await (p.connector?.tenantSso(target.id) ?? Promise.resolve({ ssoRequired: false, connection: null }));
        if (sso.ssoRequired && sso.connection && p.connector) return p.connector.start(res, sso.connection.connectionId, { interactionUid: i.uid, loginHint: hint });
        return enter(p, req, res, { accountId: i.session.accountId, way: { method: 'email' } }, target.id, 'client');
      }
      return chooseOrganization(p, req, res, i.uid, i.session.accountId, null);
    }
    if (await toConnection(p, res, i.uid, { organization, email: hint })) return;
    sendPage(res, 200, emailForm(p, i.uid, { email: hint }));
  });

  const email = step(async (p, req, res, i) => {
    const address = normalizeEmail(field(req, 'email'));
    if (!address) return sendPage(res, 400, emailForm(p, i.uid, { email: field(req, 'email')?.slice(0, 320) ?? null, error: 'Enter your email address, like name@example.com.' }));
    if (await toConnection(p, res, i.uid, { organization: param(i, 'organization'), email: address })) return;
    if (!p.mailer.configured) return sendPage(res, 503, emailForm(p, i.uid, { email: address, error: 'Sign-in with a code by email is not available on this service.' }));
    const issued = await issueEmailCode(p.services.db, { email: address, interactionUid: i.uid, ip: req.ip ?? null });
    if (issued.kind === 'rate_limited') {
      return sendPage(res, 429, emailForm(p, i.uid, { email: address, error: 'Too many codes were asked for; wait 15 minutes and try again.' }));
    }
    const delivery = await outsideSignInSlot(req, () => p.mailer.send({ to: address, code: issued.code, minutes: CODE_TTL_SECONDS / 60, site: new URL(p.oidc().issuer).host }, log));
    if (delivery !== 'sent') return sendPage(res, 502, emailForm(p, i.uid, { email: address, error: 'The code could not be mailed; try again in a moment.' }));
    sendPage(res, 200, codeForm(p, i.uid, address));
  });

  const codeForm = (p: PagesContext, uid: string, address: string, error: string | null = null) =>
    codePage({ action: `${p.base}/${uid}/code`, resendAction: `${p.base}/${uid}/email`, email: address, error, digits: CODE_DIGITS, minutes: CODE_TTL_SECONDS / 60 });

  const code = step(async (p, req, res, i) => {
    const typed = field(req, 'code');
    const check = await checkEmailCode(p.services.db, { interactionUid: i.uid, code: normalizeCode(typed) });
    switch (check.kind) {
      case 'unknown':
        return sendPage(res, 400, emailForm(p, i.uid, { error: 'That code is no longer valid (used, replaced, or tried too many times). Ask for a new one.' }));
      case 'expired':
        return sendPage(res, 400, emailForm(p, i.uid, { email: check.email, error: 'That code has expired. Ask for a new one.' }));
      case 'wrong':
        if (check.triesLeft === 0) return sendPage(res, 400, emailForm(p, i.uid, { email: check.email, error: 'Too many wrong codes: this one no longer works. Ask for a new one.' }));
        return sendPage(res, 400, codeForm(p, i.uid, check.email, `That code is not right; ${check.triesLeft} ${check.triesLeft === 1 ? 'try' : 'tries'} left.`));
      case 'accepted': {
        const { account } = await accountForEmail(p.services.db, check.email);
        await rememberIdentified(p.services.db, i.uid, { accountId: account.id, method: 'email', tenantId: null, connectionId: null });
        return chooseOrganization(p, req, res, i.uid, account.id, param(i, 'organization'));
      }
    }
  });

  const organization = step(async (p, req, res, i) => {
    const who = await emailIdentified(p.services.db, i.uid);
    if (!who) return sendPage(res, 400, emailForm(p, i.uid, { error: 'Sign in with your email first.' }));
    const chosen = field(req, 'organization');
    const tenant = chosen ? await findOrganization(p.services.db, chosen) : null;
    if (!tenant) return chooseOrganization(p, req, res, i.uid, who.accountId, null);
    return enter(p, req, res, { accountId: who.accountId, way: { method: 'email' } }, tenant.id, 'page');
  });

  const ssoOf = step(async (p, _req, res, i) => {
    const tenantId = _req.params.tenant;
    const sso = p.connector && typeof tenantId === 'string' && /^[0-9a-f-]{36}$/.test(tenantId) ? await p.connector.tenantSso(tenantId) : null;
    if (!sso?.connection || !p.connector) return sendError(res, 404, 'Single sign-on not available', 'This organization has no single sign-on to use. Go back and choose again.');
    return p.connector.start(res, sso.connection.connectionId, { interactionUid: i.uid, loginHint: null });
  });

  const handback = step(async (p, req, res, i) => {
    const id = typeof req.query.handback === 'string' ? req.query.handback : '';
    const who = await takeIdentified(p.services.db, i.uid, id);
    if (!who || who.method !== 'sso' || !who.tenantId || !who.connectionId) return sendError(res, 400, 'Sign-in expired', EXPIRED);
    return p.oidc().finishSignIn(req, res, { accountId: who.accountId, tenantId: who.tenantId, method: 'sso', connectionId: who.connectionId });
  });

  const interactions: InteractionRouterFactory = (o) => {
    bound = o;
    o.setOrganizationSwitch?.(organizationSwitch(services.db, opts.connector, oidc));
    const form = formBody(new URL(o.issuer).origin);
    const router = express.Router({ caseSensitive: true, strict: false });
    router.get('/:uid', start);
    router.post('/:uid/email', form, email);
    router.post('/:uid/code', form, code);
    router.post('/:uid/organization', form, organization);
    router.post('/:uid/sso/:tenant', form, ssoOf);
    router.get('/:uid/sso', handback);
    router.use((_req: Request, res: Response) => sendError(res, 404, 'Page not found', 'There is no such sign-in page.'));
    return router;
  };

  const completer: SignInCompleter = {
    async completeFederated(req, res, interactionUid, identity: UpstreamIdentity) {
      try {
        const p = pc();
        const { account } = await accountForUpstream(services.db, identity);
        // The connection admits to its own tenant only.
        const way = { method: 'sso', connectionId: identity.connectionId } as const;
        const admission = await admitToTenant(services.db, {
          tenantId: identity.tenantId,
          providerIssuer: p.oidc().issuer,
          account,
          way,
          ssoRequired: false,
          origin: { requestId: requestReference(res), ip: req.ip ?? null },
          commit: true,
        });
        services.decisionMemory?.facts?.forget(identity.tenantId);
        if (admission.kind === 'refused') {
          return sendError(res, 403, 'You cannot sign in to this organization', REFUSED_BY_CONNECTION[admission.reason] ?? admission.detail);
        }
        const id = await rememberIdentified(services.db, interactionUid, { accountId: account.id, method: 'sso', tenantId: admission.tenantId, connectionId: identity.connectionId });
        res.redirect(303, `${new URL(p.oidc().issuer).origin}${p.base}/${encodeURIComponent(interactionUid)}/sso?handback=${id}`);
      } catch (err) {
        log.error({ err, request_id: requestReference(res) }, 'Sign-in through a connection failed');
        if (!res.headersSent) sendError(res, 500, 'Sign-in failed', 'The sign-in could not continue; try again in a moment.');
      }
    },
    async failFederated(req, res, _interactionUid, failure: FederatedFailure) {
      let reference = requestReference(res);
      try {
        if (failure.tenantId) {
          const origin = { actor: { issuer: null, subject: null, email: null, platformAdmin: false }, requestId: reference, ip: req.ip ?? null };
          const way = failure.connectionId ? ({ method: 'sso', connectionId: failure.connectionId } as const) : null;
          // The event belongs to the connection's tenant: written in its scope.
          // The reference is the event's id: the tenant admin finds the reason by it.
          reference = await withTenant(services.db, failure.tenantId, (trx) => recordFailure(trx, origin, failure.tenantId!, null, way, failure.reason, failure.detail));
        }
      } catch (err) {
        log.error({ err, request_id: reference }, 'Recording a failed sign-in failed');
      }
      sendError(res, 400, 'Sign-in failed', 'Your organization’s sign-in did not let you in. Try again, or give your administrator the reference below.', reference);
    },
  };

  return { interactions, completer };
}

const REFUSED_BY_CONNECTION: Partial<Record<string, string>> = {
  removed: 'You were removed from this organization; only its administrators can let you back in.',
  tenant_unavailable: 'This organization is not available at the moment; its administrators can tell you more.',
  directory_inactive: 'Your account in this organization’s directory is deactivated; ask its administrators.',
  not_in_directory: 'This organization’s members come from its directory, which does not list you; ask its administrators.',
};
