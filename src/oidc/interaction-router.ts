/**
 * The sign-in pages mounted at `/oidc/interaction/<uid>` when no other router is given (see
 * ./index.ts). This one only ends every interaction with the `login_required` error: the
 * provider signs nobody in until its sign-in pages are installed.
 */
import express, { type RequestHandler } from 'express';
import type { InteractionRouterFactory } from '../context/sign-in';

export const defaultInteractionRouter: InteractionRouterFactory = (oidc) => {
  const router = express.Router();
  const handler: RequestHandler = async (req, res, next) => {
    try {
      const provider = await oidc.provider();
      await provider.interactionFinished(req, res, { error: 'login_required', error_description: 'Sign-in is not available on this service.' }, { mergeWithLastSubmission: false });
    } catch (err) {
      next(err);
    }
  };
  router.get('/:uid', handler);
  return router;
};
