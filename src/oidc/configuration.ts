/**
 * The protocol library's configuration (docs/sign-in.md#the-provider): authorization code with
 * PKCE (S256) for every client, first-party clients (no consent page; `offline_access` gets a
 * refresh token without `prompt=consent`), rotating refresh tokens, RP-initiated logout with the
 * service's own pages, JWT access tokens for the service's API, no development pages.
 *
 * Where the tenant a person signed into lives: on the Grant. `finishSignIn` (./sign-in.ts) makes
 * a grant for the sign-in and records (tenant, connection, method) beside it in `oidc_payloads`
 * (`grant_sign_in`); every code, access token and refresh token carries its grant id, so
 * `findAccount` and `extraTokenClaims` read the tenant through `token.grantId`, and a refresh
 * reads the membership of that moment.
 */
import type { Configuration, KoaContextWithOIDC, Account } from 'oidc-provider' with { 'resolution-mode': 'import' };
import type { Database } from '../db/tenant-scope';
import type { Config } from '../config';
import { pgAdapter } from './adapter';
import { admittedMembership, flatClaims, personClaims, readAccount, readGrantSignIn, type PersonClaims } from './claims';
import { errorPage, logoutPage, signedOutPage } from './protocol-pages';
import type { PrivateJwk } from './keys';
import type { OrganizationSwitch } from '../context/sign-in';

/** The scopes the provider knows. */
export const OIDC_SCOPES = ['openid', 'offline_access', 'profile', 'email'] as const;

/** Token lifetimes, in seconds (docs/sign-in.md#token-lifetimes). */
export const OIDC_TTL = {
  AccessToken: 900,
  IdToken: 900,
  AuthorizationCode: 60,
  Interaction: 3600,
  Session: 14 * 24 * 3600,
  Grant: 14 * 24 * 3600,
  RefreshToken: 14 * 24 * 3600,
} as const;


/** An account the way findAccount answers it, with the claims it read (reused for the access token of the same request). */
interface LoadedAccount extends Account {
  readonly person: PersonClaims;
}

const ORGANIZATION = /^[A-Za-z0-9-]{1,255}$/;

/**
 * First-party clients: a request naming `offline_access` keeps it without `prompt=consent` (the
 * library drops it otherwise, as OpenID Connect Core says for third parties).
 */
function keepOfflineAccess(ctx: KoaContextWithOIDC): void {
  const raw = (ctx.method === 'POST' ? (ctx.oidc.body as Record<string, unknown> | undefined)?.scope : ctx.query.scope) as unknown;
  const params = ctx.oidc.params as Record<string, unknown>;
  const scope = typeof params.scope === 'string' ? params.scope.split(' ') : [];
  if (typeof raw === 'string' && raw.split(' ').includes('offline_access') && !scope.includes('offline_access') && ctx.oidc.client?.grantTypeAllowed('refresh_token')) {
    params.scope = [...scope, 'offline_access'].join(' ');
  }
}

function resourceScopes(scope: string): string {
  return scope
    .split(' ')
    .filter((s) => (OIDC_SCOPES as readonly string[]).includes(s))
    .join(' ');
}

export interface ConfigurationInput {
  readonly config: Config;
  readonly db: Database;
  readonly issuer: string;
  readonly audience: string;
  readonly keys: readonly PrivateJwk[];
  readonly cookieKeys: readonly string[];
  /** `organization=` on a live session (src/oidc/pages/switch.ts): keep the grant, a new one, an interaction or an error. */
  readonly switchOrganization?: OrganizationSwitch;
}

export function providerConfiguration({ config, db, issuer, audience, keys, cookieKeys, switchOrganization }: ConfigurationInput): Configuration {
  const issuerPath = new URL(issuer).pathname.replace(/\/+$/, '');

  async function loadAccount(ctx: KoaContextWithOIDC, sub: string, token?: { grantId?: string }): Promise<LoadedAccount | undefined> {
    const grantId = token?.grantId;
    // Without a token (the session's account at the authorization endpoint): the account alone.
    if (!grantId) {
      const account = await readAccount(db, sub);
      // A session whose account is gone: the library needs an account to go on; no code it
      // issues will be exchanged (below, with the code, the account is not found).
      if (!account) return { accountId: sub, person: { sub }, claims: async () => ({ sub }) };
      const person: PersonClaims = { sub: account.id, ...(account.email !== null ? { email: account.email, email_verified: account.emailVerified } : {}), ...(account.name ? { name: account.name } : {}) };
      return { accountId: sub, person, claims: async () => flatClaims(person) };
    }
    const person = await personClaims(db, issuer, sub, grantId);
    // The account is gone, or no longer admitted to the tenant the sign-in chose: the code or
    // refresh token is refused (invalid_grant).
    if (!person) return undefined;
    return { accountId: sub, person, claims: async () => flatClaims(person) };
  }

  /**
   * Whether the session's grant may answer this request without the sign-in pages: the person
   * is still admitted to the tenant it was made for, and the request names no other tenant
   * (`organization`). Otherwise the pages decide again (with `prompt=none`: an error).
   */
  async function sessionGrantFits(grantId: string, accountId: string, organization: unknown): Promise<boolean> {
    const signIn = await readGrantSignIn(db, grantId);
    const asked = typeof organization === 'string' && organization !== '' ? organization : null;
    if (!signIn?.tenantId) return asked === null;
    const m = await admittedMembership(db, issuer, accountId, signIn.tenantId);
    if (!m) return false;
    return asked === null || asked === m.tenantId || asked === m.slug;
  }

  return {
    adapter: pgAdapter(db, config),
    jwks: { keys: keys.map((k) => ({ ...k })) as never },
    cookies: { keys: [...cookieKeys], long: { httpOnly: true, sameSite: 'lax' }, short: { httpOnly: true, sameSite: 'lax' } },
    scopes: [...OIDC_SCOPES],
    claims: {
      openid: ['sub', 'tenant_id', 'tenant', 'tenant_role', 'permissions', 'sso_connection_id'],
      email: ['email', 'email_verified'],
      profile: ['name'],
    },
    // The scopes' claims go into the ID token (the product reads them there; there is no userinfo endpoint).
    conformIdTokenClaims: false,
    responseTypes: ['code'],
    pkce: { required: () => true },
    extraParams: {
      /** The tenant to sign into (a slug or id), read by the sign-in pages. */
      organization(ctx: KoaContextWithOIDC, value: string | undefined) {
        keepOfflineAccess(ctx);
        if (value !== undefined && !ORGANIZATION.test(value)) {
          (ctx.oidc.params as Record<string, unknown>).organization = undefined;
        }
      },
    },
    findAccount: loadAccount as Configuration['findAccount'],
    extraTokenClaims: async (ctx, token) => {
      if (token.kind !== 'AccessToken') return undefined;
      const t = token as unknown as { accountId?: string; grantId?: string };
      if (!t.accountId) return undefined;
      const held = ctx.oidc.entities.Account as LoadedAccount | undefined;
      const person = held?.accountId === t.accountId && held.person ? held.person : ((await loadAccount(ctx, t.accountId, t)))?.person;
      if (!person) return undefined;
      const { sub: _sub, ...claims } = flatClaims(person);
      return claims;
    },
    loadExistingGrant: async (ctx) => {
      const chosen = ctx.oidc.result?.consent?.grantId;
      const grantId = chosen ?? ctx.oidc.session!.grantIdFor(ctx.oidc.client!.clientId);
      if (!grantId) return undefined;
      let grant = await ctx.oidc.provider.Grant.find(grantId);
      if (!grant) return undefined;
      const organization = (ctx.oidc.params as Record<string, unknown>).organization;
      if (!chosen && typeof organization === 'string' && switchOrganization) {
        // The tenant is chosen per authorization: organization= naming another tenant than the
        // session's grant switches (prompt=none: at once, or a protocol error) or asks the pages.
        const scope = (ctx.oidc.params as Record<string, unknown>).scope;
        const out = await switchOrganization({
          accountId: grant.accountId!,
          clientId: grant.clientId!,
          grantId,
          organization,
          scope: typeof scope === 'string' ? scope : 'openid',
          promptNone: ctx.oidc.prompts.has('none'),
        });
        if (out === 'interaction') return undefined;
        if (typeof out === 'object' && 'error' in out) {
          const { errors } = await import('oidc-provider');
          throw out.error === 'login_required' ? new errors.LoginRequired(out.description) : new errors.AccessDenied(out.description);
        }
        if (typeof out === 'object') {
          grant = await ctx.oidc.provider.Grant.find(out.grantId);
          return grant ?? undefined;
        }
      }
      // Without organization=, or after the pages kept the grant: its tenant must still admit the person.
      if (!chosen && !(await sessionGrantFits(grantId, grant.accountId!, switchOrganization ? undefined : organization))) return undefined;
      if (!chosen) {
        // First-party: the session's grant covers what the client asks for now (no consent page).
        // It keeps the tenant its sign-in chose.
        const scope = (ctx.oidc.params as Record<string, unknown>).scope;
        if (typeof scope === 'string' && scope !== '') {
          grant.addOIDCScope(scope);
          grant.addResourceScope(audience, resourceScopes(scope));
          await grant.save();
        }
      }
      return grant;
    },
    issueRefreshToken: async (_ctx, client, code) => client.grantTypeAllowed('refresh_token') && code.scopes.has('offline_access'),
    rotateRefreshToken: true,
    interactions: { url: (_ctx, interaction) => `${issuerPath}/interaction/${interaction.uid}` },
    features: {
      devInteractions: { enabled: false },
      userinfo: { enabled: false },
      introspection: { enabled: false },
      revocation: { enabled: true },
      registration: { enabled: false },
      pushedAuthorizationRequests: { enabled: false },
      rpInitiatedLogout: {
        enabled: true,
        logoutSource: async (ctx, form) => {
          ctx.type = 'html';
          ctx.body = logoutPage(form);
        },
        postLogoutSuccessSource: async (ctx) => {
          ctx.type = 'html';
          ctx.body = signedOutPage();
        },
      },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => audience,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx, resource) => {
          if (resource !== audience) throw new Error(`unknown resource ${resource}`);
          return {
            scope: OIDC_SCOPES.join(' '),
            audience,
            accessTokenTTL: OIDC_TTL.AccessToken,
            accessTokenFormat: 'jwt',
            jwt: { sign: { alg: 'RS256' } },
          };
        },
      },
    },
    clientBasedCORS: (_ctx, origin, client) => origin !== 'null' && (client.redirectUris ?? []).some((u) => URL.parse(u)?.origin === origin),
    renderError: async (ctx, out) => {
      ctx.type = 'html';
      ctx.body = errorPage(out as { error?: string; error_description?: string });
    },
    ttl: {
      AccessToken: OIDC_TTL.AccessToken,
      IdToken: OIDC_TTL.IdToken,
      AuthorizationCode: OIDC_TTL.AuthorizationCode,
      Interaction: OIDC_TTL.Interaction,
      Session: OIDC_TTL.Session,
      Grant: OIDC_TTL.Grant,
      // A rotated refresh token lives as long as the one it replaces: a sign-in lasts 14 days at most.
      RefreshToken: (ctx) => ctx?.oidc?.entities.RotatedRefreshToken?.remainingTTL ?? OIDC_TTL.RefreshToken,
    },
  };
}
