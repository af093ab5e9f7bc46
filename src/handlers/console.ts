/**
 * Tag `console`: the one-time codes of console sign-in links (docs/console.md#the-local-provider-tenantctl-console).
 */
import type {
  CreateConsoleCodeData,
  CreateConsoleCodeResponses,
  CreateConsoleSessionData,
  CreateConsoleSessionResponses,
} from '../../generated/types.gen';
import { bearerToken } from '../auth/verify';
import { createSignInCode, redeemSignInCode, SIGN_IN_CODE_DEFAULT_TTL_SECONDS } from '../domain/console-sign-in';
import { ApiError } from '../errors';
import { authenticated, publicOperation, type HandlerInput, type Reply } from './types';

/** A code for the request's own bearer token (verified by the pipeline before this runs). */
export const createConsoleCode = authenticated(async (ctx, input: HandlerInput<CreateConsoleCodeData>): Promise<Reply<CreateConsoleCodeResponses>> => {
  const token = bearerToken(input);
  if (!token) throw new ApiError('unauthorized', 'A valid bearer token is required.', {}, { 'WWW-Authenticate': 'Bearer realm="tenant-service"' });
  const exp = ctx.caller.claims.exp;
  const created = await createSignInCode(ctx.services.db, ctx.origin, {
    token,
    identity: ctx.caller,
    tokenExpiresAt: typeof exp === 'number' ? exp : null,
    ttlSeconds: input.body?.expires_in ?? SIGN_IN_CODE_DEFAULT_TTL_SECONDS,
  });
  return { status: 201, body: { code: created.code, expires_in: created.expiresIn, expires_at: created.expiresAt.toISOString() } };
});

export const createConsoleSession = publicOperation(async (ctx, input: HandlerInput<CreateConsoleSessionData>): Promise<Reply<CreateConsoleSessionResponses>> => {
  const session = await redeemSignInCode(ctx.services.db, ctx.origin, input.body.code);
  return { status: 200, body: { access_token: session.accessToken, token_type: 'Bearer', expires_in: session.expiresIn } };
});
