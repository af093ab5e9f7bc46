/**
 * createApp(config, services): assembles the pipeline from src/http, in the order of
 * docs/architecture.md#how-a-request-is-handled:
 *
 * helmet → request state (id, access line) → the caller's turn of the event loop → a sign-in slot (/oidc, /sso) → /oidc (the OpenID provider, outside the API) → X-Tenant format → /docs and /openapi.{json,yaml} → /console → /sso (SSO callbacks)
 * → bearer token (recorded, raised after counting) → operation matched once (case-sensitive,
 * from the contract) → SCIM token of a SCIM operation (recorded like the bearer token's) → rate limit of the operation's x-rate-limit counter (any spelling of /api
 * counted; callers without a valid token per address, before any body is read) → gate (401 /
 * 404 / 405) → body (only for operations with a requestBody) → validation → a fair turn among callers → access (x-access)
 * → tenant entered and handler dispatched → typed reply. Every failure is an ApiError that the
 * error stage turns into the Error body.
 */
import os from 'node:os';
import express from 'express';
import helmet from 'helmet';
import { createAuthenticator } from './auth/verify';
import type { Config } from './config';
import { handlers } from './handlers';
import type { AnyHandler } from './http/handler-contract';
import { accessStage } from './http/access';
import { bodyStage } from './http/body';
import { readContractOperations } from './http/contract';
import { checkOperationTable, dispatchStage } from './http/dispatch';
import { createConsoleRouter, consoleStage } from './http/console';
import { createDocsRouter, docsStage } from './http/docs';
import { createSso, ssoStage } from './sso';
import { errorStage } from './http/error-response';
import { RefusalDelay } from './http/refusal-delay';
import { CallerTurns, callerTurnsStage, neverWaiting } from './http/caller-turns';
import { FairQueue, fairnessStage } from './http/fair-queue';
import { SignInWork, signInWorkStage } from './http/sign-in-work';
import { POOL_SIZE } from './db/database';
import { gateStage, matchStage } from './http/match';
import { pipeline } from './http/pipeline';
import { requestStateStage } from './http/request-state';
import type { AppServices } from './context/app-services';
import { tenantHeaderStage } from './http/tenant-header';
import { tokenStage } from './http/token';
import { scimTokenStage } from './http/scim-token';
import { createContractApi } from './http/openapi';
import { validateStage } from './http/validate';
import { expressTrustProxy } from './trust-proxy';
import { createOidc, oidcStage } from './oidc';
import { createSignInPages } from './oidc/pages';

export { BODY_LIMIT } from './http/body';

/**
 * Fairness between callers (docs/operations.md, "Fairness between callers"): two requests per
 * core do their work at once (within the pool's size), since more only lengthen each other's
 * latency; one caller may have 1 000 waiting; a request holds its slot 100 ms at most.
 */
const REQUEST_SLOTS = Math.min(POOL_SIZE, 2 * Math.max(1, os.availableParallelism()));
const MAX_WAITING_PER_CALLER = 1000;
const SLOT_HOLD_MS = 100;
/**
 * Sign-ins beside decisions (docs/operations.md, "Sign-ins beside decisions"): one sign-in
 * request per core does its work at once (at least two); an address may have 1 000 waiting.
 */
const SIGN_IN_SLOTS = Math.max(2, os.availableParallelism());

/** Builds the express app. `services` carries the pool, logger, keys and rate limiter. */
export async function createApp(config: Config, services: AppServices): Promise<express.Express> {
  const operations = readContractOperations();
  const table = handlers as unknown as Readonly<Record<string, AnyHandler>>;
  checkOperationTable(table, operations);
  const contract = await createContractApi();

  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', expressTrustProxy(config.trustProxy));
  app.set('etag', false);
  app.set('query parser', 'simple');
  app.set('case sensitive routing', true);

  // Sign-in: the tenants' SSO connections (src/sso), the provider's sign-in pages that send people
  // to them and take them back (src/oidc/pages), and the service's own OpenID provider, built on
  // its first request (src/oidc/index.ts). Tests may put a harness in place of either half.
  const sso = createSso(config, services);
  const pages = createSignInPages(config, services, { connector: sso.connector });
  const oidc = createOidc(config, services, { interactionRouter: services.oidcInteractions ?? pages.interactions });
  const authenticator = createAuthenticator(config, services.localKeys, services.authOptions, oidc);
  const signInWork = new SignInWork(SIGN_IN_SLOTS, MAX_WAITING_PER_CALLER, SLOT_HOLD_MS);
  services.metrics?.watchSignInWork?.(() => signInWork.load);
  // The stages run as one middleware (src/http/pipeline.ts): one router layer, not a dozen.
  app.use(
    pipeline(
      [
        helmet(),
        requestStateStage(services),
        callerTurnsStage(new CallerTurns(MAX_WAITING_PER_CALLER), authenticator.knownCaller, neverWaiting(operations)),
        // The sign-in routes' per-address limits, before their stages answer (src/http/sign-in-rate-limit.ts).
        ...(services.rateLimiter?.signIn ? [services.rateLimiter.signIn] : []),
        signInWorkStage(signInWork),
        oidcStage(oidc.handle, services.logger),
        tenantHeaderStage(),
        docsStage(createDocsRouter(config)),
        consoleStage(createConsoleRouter(config)),
        ssoStage(sso.router(services.signInCompleter ?? pages.completer)),
        tokenStage(authenticator),
        matchStage(contract.router, operations),
        scimTokenStage(services.db),
        ...(services.rateLimiter ? [services.rateLimiter.middleware] : []),
        gateStage(),
        bodyStage(),
        validateStage((operationId) => contract.validatorsFor(operationId)),
        fairnessStage(new FairQueue(REQUEST_SLOTS, MAX_WAITING_PER_CALLER, SLOT_HOLD_MS)),
        accessStage(),
        dispatchStage(table, config),
      ],
      errorStage(services.logger, services.refusalDelay ?? new RefusalDelay()),
    ),
  );
  return app;
}
