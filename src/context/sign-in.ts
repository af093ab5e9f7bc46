/**
 * The types sign-in's two halves speak (docs/sign-in.md): src/oidc (this service's OpenID
 * provider: its sign-in pages, accounts, organizations) and src/sso (each tenant's own OIDC or
 * SAML connection). The provider sends a person to a connection through `SsoConnector`; the
 * connection's callback hands what the identity provider vouched for back through
 * `SignInCompleter`. Types only.
 */
import type { Request, RequestHandler, Response } from 'express';
import type Provider from 'oidc-provider' with { 'resolution-mode': 'import' };
import type { Interaction } from 'oidc-provider' with { 'resolution-mode': 'import' };

/** A product application registered with the provider (oidc_clients). */
export interface OidcClient {
  readonly client_id: string;
  readonly name: string;
  readonly type: 'confidential' | 'public';
  readonly redirect_uris: readonly string[];
  readonly post_logout_redirect_uris: readonly string[];
  readonly built_in: boolean;
  readonly created_at: Date;
  readonly updated_at: Date;
}

/** What the provider library needs of a client: its metadata, with the secret opened. */
export interface OidcClientMetadata {
  readonly client: OidcClient;
  /** The plain secret of a confidential client; null for a public one. */
  readonly clientSecret: string | null;
}

/** What a tenant's identity provider vouched for, after every check of its protocol. */
export interface UpstreamIdentity {
  readonly connectionId: string;
  /** The tenant whose connection it is: the only tenant this sign-in may admit the person to. */
  readonly tenantId: string;
  readonly protocol: 'oidc' | 'saml';
  /** The OIDC issuer, or the SAML identity provider's entity id. */
  readonly issuer: string;
  /** The ID token's `sub`, or the SAML NameID. */
  readonly subject: string;
  /** Lower-cased; null when the identity provider sent none. */
  readonly email: string | null;
  /** OIDC: the ID token's `email_verified`; SAML: true (the IdP asserts the address it manages). */
  readonly emailVerified: boolean;
  readonly name: string | null;
}

/** A sign-in in progress at the provider, handed to a connection. */
export interface SignInHandoff {
  /** The provider's interaction id; the connection's callback returns it to `SignInCompleter`. */
  readonly interactionUid: string;
  /** The email the person gave or the client hinted, passed on as the IdP's login hint. */
  readonly loginHint: string | null;
}

/** A tenant's single sign-on, as the sign-in pages need it. */
export interface TenantSso {
  /** `sso_required`: its members sign in only through its connections. */
  readonly ssoRequired: boolean;
  /** The connection a person is sent to: the oldest active one; null when none is active. */
  readonly connection: { readonly connectionId: string; readonly type: 'oidc' | 'saml' } | null;
}

/** Implemented by src/sso; called by the provider's sign-in pages. */
export interface SsoConnector {
  tenantSso(tenantId: string): Promise<TenantSso>;
  /**
   * Answers `res` with the redirect (303) to the connection's identity provider, remembering
   * the handoff until the callback; the callback later calls `SignInCompleter.completeFederated`.
   */
  start(res: Response, connectionId: string, handoff: SignInHandoff): Promise<void>;
}

/** Why a sign-in through a connection failed: written to `user.sign_in_failed` (no secrets). */
export interface FederatedFailure {
  readonly connectionId: string | null;
  readonly tenantId: string | null;
  /** A short code, e.g. `saml_signature_invalid`, `oidc_nonce_mismatch`, `state_unknown`. */
  readonly reason: string;
  /** A sentence for the tenant admin reading the event. */
  readonly detail: string;
}

/** Implemented by src/oidc; called by src/sso's callbacks. */
export interface SignInCompleter {
  /**
   * The identity provider vouched for `identity`: links or creates the account, admits the person
   * to the connection's tenant (or refuses: removed, directory-inactive, suspended tenant) and
   * answers `res` by resuming the provider's interaction `interactionUid`.
   */
  completeFederated(req: Request, res: Response, interactionUid: string, identity: UpstreamIdentity): Promise<void>;
  /** Records `user.sign_in_failed` and answers `res` with the error page carrying a reference. */
  failFederated(req: Request, res: Response, interactionUid: string | null, failure: FederatedFailure): Promise<void>;
}

/** What the provider's sign-in pages settled, handed to `Oidc.finishSignIn` (src/oidc/index.ts). */
export interface SignInChoice {
  /** The account (sign_in_accounts.id): the tokens' `sub`. */
  readonly accountId: string;
  /** The tenant the person signed into; null: none (the tokens carry no tenant claims). */
  readonly tenantId: string | null;
  readonly method: 'email' | 'sso';
  /** The tenant's SSO connection the person came through; null for a code by mail. */
  readonly connectionId: string | null;
}

/** The provider of one instance, as its sign-in pages use it (src/oidc/index.ts describes each member). */
export interface Oidc {
  readonly issuer: string;
  /** The audience of the provider's access tokens (the service's API). */
  readonly audience: string;
  /** The handler of `/oidc` and `/oidc/*` (req.url as received). */
  readonly handle: RequestHandler;
  provider(): Promise<Provider>;
  /** The public JWKs the provider publishes now (for the service's own token verifier). */
  publicKeys(): Promise<Array<Record<string, unknown>>>;
  interactionDetails(req: Request, res: Response): Promise<Interaction>;
  finishSignIn(req: Request, res: Response, choice: SignInChoice): Promise<void>;
  /** Installs the sign-in pages' answer to `organization=` on a live session (see OrganizationSwitch). */
  setOrganizationSwitch?(fn: OrganizationSwitch): void;
}

/**
 * `organization=<slug or id>` on an authorization request of a signed-in person whose session
 * holds a grant for the client (docs/sign-in.md#organizations): `keep` the grant (it chose that
 * tenant), `interaction` (the pages decide), a new grant's id into the other tenant (prompt=none,
 * a member there), or a protocol error (prompt=none never shows a page).
 */
export type OrganizationSwitch = (request: {
  readonly accountId: string;
  readonly clientId: string;
  readonly grantId: string;
  readonly organization: string;
  readonly scope: string;
  readonly promptNone: boolean;
}) => Promise<'keep' | 'interaction' | { readonly grantId: string } | { readonly error: 'access_denied' | 'login_required'; readonly description: string }>;

/** Builds the handler mounted at `/oidc/interaction` (req.url is `/<uid>…` there). */
export type InteractionRouterFactory = (oidc: Oidc) => RequestHandler;
