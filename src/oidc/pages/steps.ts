/**
 * The steps of a sign-in at the provider's pages (docs/sign-in.md#the-sign-in-page): where an
 * email or an organization leads (home realm discovery), which organization a person enters,
 * and the end of the interaction. Each step answers the response itself.
 */
import type { Request, Response } from 'express';
import type { Config } from '../../config';
import type { AppServices } from '../../context/app-services';
import type { Oidc, SsoConnector, TenantSso } from '../../context/sign-in';
import { readAccount } from '../claims';
import { findOrganization, organizationsOf, tenantOfEmail } from '../../domain/sign-in/organizations';
import { admitToTenant, type Admission, type SignInWay } from '../../tenancy/sign-in-admission';
import type { SignInCodeMailer } from '../../mail/sign-in-code-mail';
import { organizationsPage, type OrganizationChoice } from './html';
import { requestReference, sendError, sendPage } from './respond';

export interface PagesContext {
  readonly config: Config;
  readonly services: AppServices;
  readonly connector: SsoConnector | null;
  readonly mailer: SignInCodeMailer;
  readonly oidc: () => Oidc;
  /** `/oidc/interaction`, as the browser sees it. */
  readonly base: string;
}

const NO_SSO: TenantSso = { ssoRequired: false, connection: null };

export async function tenantSso(pc: PagesContext, tenantId: string): Promise<TenantSso> {
  return pc.connector ? pc.connector.tenantSso(tenantId) : NO_SSO;
}

/** Ends the interaction with an error the client receives (access_denied, login_required…). */
export async function abort(pc: PagesContext, req: Request, res: Response, error: 'access_denied' | 'login_required', description: string): Promise<void> {
  const provider = await pc.oidc().provider();
  await provider.interactionFinished(req, res, { error, error_description: description }, { mergeWithLastSubmission: false });
}

/**
 * Home realm discovery: the tenant named by `organization`, else the one that verified the
 * email's domain; when it has an active connection, the person is sent there (true). False: no
 * connection applies, the caller goes on.
 */
export async function toConnection(pc: PagesContext, res: Response, uid: string, by: { organization: string | null; email: string | null }): Promise<boolean> {
  if (!pc.connector) return false;
  let tenantId: string | null = null;
  if (by.organization) tenantId = (await findOrganization(pc.services.db, by.organization))?.id ?? null;
  if (tenantId === null && by.email) tenantId = await tenantOfEmail(pc.services.db, by.email);
  if (tenantId === null) return false;
  const sso = await pc.connector.tenantSso(tenantId);
  if (!sso.connection) return false;
  await pc.connector.start(res, sso.connection.connectionId, { interactionUid: uid, loginHint: by.email });
  return true;
}

function originOf(req: Request, res: Response) {
  return { requestId: requestReference(res), ip: req.ip ?? null, settingsKeys: undefined };
}

/** Admits the account to the tenant by `way` and ends the interaction into it; an error page or access_denied when refused. */
export async function enter(pc: PagesContext, req: Request, res: Response, who: { accountId: string; way: SignInWay }, tenantId: string, refusal: 'page' | 'client'): Promise<void> {
  const account = await readAccount(pc.services.db, who.accountId);
  if (!account) return sendError(res, 400, 'Sign-in failed', 'This sign-in has ended. Go back to the application and start again.');
  const sso = who.way.method === 'email' ? await tenantSso(pc, tenantId) : NO_SSO;
  const admission: Admission = await admitToTenant(pc.services.db, {
    tenantId,
    providerIssuer: pc.oidc().issuer,
    account: { id: account.id, email: account.email, emailVerified: account.emailVerified, name: account.name },
    way: who.way,
    ssoRequired: sso.ssoRequired,
    origin: originOf(req, res),
    commit: true,
  });
  pc.services.decisionMemory?.facts?.forget(tenantId);
  if (admission.kind === 'admitted') {
    return pc.oidc().finishSignIn(req, res, { accountId: account.id, tenantId: admission.tenantId, method: who.way.method, connectionId: who.way.method === 'sso' ? who.way.connectionId : null });
  }
  const message = REFUSALS[admission.reason];
  if (refusal === 'client') return abort(pc, req, res, 'access_denied', message);
  return sendError(res, 403, 'You cannot sign in to this organization', message);
}

const REFUSALS: Record<Exclude<Admission, { kind: 'admitted' }>['reason'], string> = {
  tenant_not_found: 'There is no such organization.',
  tenant_unavailable: 'This organization is not available at the moment; its administrators can tell you more.',
  removed: 'You were removed from this organization; only its administrators can let you back in.',
  directory_inactive: 'Your account in this organization’s directory is deactivated; ask its administrators.',
  not_in_directory: 'This organization’s members come from its directory, which does not list you; ask its administrators.',
  not_member: 'You are not a member of this organization. Ask its administrators for an invitation.',
  sso_required: 'This organization requires you to sign in through its single sign-on, not with a code by email.',
};

/**
 * After an email code: the organizations the person may enter. `organization` given: that one or
 * access_denied to the client. Otherwise one → entered; several (or some only through their SSO)
 * → the choice page; none → signed in without an organization.
 */
export async function chooseOrganization(pc: PagesContext, req: Request, res: Response, uid: string, accountId: string, organization: string | null): Promise<void> {
  const way: SignInWay = { method: 'email' };
  if (organization) {
    const tenant = await findOrganization(pc.services.db, organization);
    if (!tenant) return abort(pc, req, res, 'access_denied', 'There is no such organization.');
    return enter(pc, req, res, { accountId, way }, tenant.id, 'client');
  }
  const account = await readAccount(pc.services.db, accountId);
  if (!account) return sendError(res, 400, 'Sign-in failed', 'This sign-in has ended. Go back to the application and start again.');
  const orgs = await organizationsOf(pc.services.db, { issuer: pc.oidc().issuer, accountId, email: account.email, emailVerified: account.emailVerified });
  const choices: OrganizationChoice[] = [];
  for (const o of orgs) {
    const sso = await tenantSso(pc, o.id);
    // A tenant that requires SSO is entered only through its connection.
    if (sso.ssoRequired) {
      if (sso.connection) choices.push({ slug: o.slug, name: o.name, ssoAction: `${pc.base}/${uid}/sso/${o.id}` });
      continue;
    }
    choices.push({ slug: o.slug, name: o.name });
  }
  if (choices.length === 0) return pc.oidc().finishSignIn(req, res, { accountId, tenantId: null, method: 'email', connectionId: null });
  if (choices.length === 1 && !choices[0]!.ssoAction) return enter(pc, req, res, { accountId, way }, orgs.find((o) => o.slug === choices[0]!.slug)!.id, 'page');
  return sendPage(res, 200, organizationsPage({ action: `${pc.base}/${uid}/organization`, organizations: choices }));
}
