/**
 * The service's own OpenID provider (docs/sign-in.md#the-provider), served under `/oidc` on every
 * instance, its issuer `<SERVICE_PUBLIC_URL>/oidc`.
 *
 * The seam for the sign-in pages:
 *
 *   createOidc(config, services, { interactionRouter }) → Oidc
 *     `interactionRouter(oidc)` returns the express handler mounted at `/oidc/interaction`
 *     (req.url is then `/<uid>…`); it shows the pages of the interaction `<uid>` and ends it with
 *     `oidc.finishSignIn`: the sign-in pages of src/oidc/pages (src/app.ts; tests may pass a
 *     harness through `services.oidcInteractions`).
 *   oidc.finishSignIn(req, res, { accountId, tenantId, method, connectionId })
 *     ends the interaction of `req` (its cookie): the person is signed in as `accountId`, into
 *     `tenantId` (null: no tenant), by `method` ('email' | 'sso'), through `connectionId`. It
 *     makes a grant for every scope the client asked for (first-party: no consent), records the
 *     sign-in on that grant (what the tokens' tenant claims read, see ./configuration.ts) and
 *     answers `res` with the 303 back to the authorization endpoint. The caller has made the
 *     account (sign_in_accounts) and the membership (T's members row with issuer = `oidc.issuer`,
 *     subject = the account id): an unknown account ends the interaction with `access_denied`,
 *     and the code is refused (invalid_grant) if the entry decision refuses the membership.
 *   To refuse instead: `(await oidc.provider()).interactionFinished(req, res, { error, error_description })`.
 *
 * The types (`Oidc`, `SignInChoice`, `InteractionRouterFactory`) are in src/context/sign-in.ts.
 *   oidc.interactionDetails(req, res) → the library's interaction (uid, prompt, params: client_id,
 *     scope, login_hint, organization, …), for the pages.
 *   oidc.provider() → the library's Provider (built on first use, rebuilt when the key set changes).
 *
 * The stage (`oidcStage`) hands `/oidc` and `/oidc/*` to it before the API pipeline: no X-Tenant,
 * no token, no JSON error body; the protocol's own answers.
 */
export { createOidc, type Oidc, type OidcOptions, type SignInChoice, type InteractionRouterFactory } from './provider';
export { oidcIssuer, oidcApiAudience, OIDC_MOUNT_PATH } from './issuer';
export { oidcStage } from './stage';
