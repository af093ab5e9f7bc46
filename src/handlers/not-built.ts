/**
 * The one place that answers 501 for operations whose issue has not landed yet, so a missing
 * feature says so instead of pretending.
 */
import { ApiError } from '../http/errors';
import { authenticated, type Handler } from './types';

/** A handler that answers 501 `Not implemented`, naming the operation. */
export function notBuilt(operationId: string): Handler {
  return authenticated(async () => {
    throw new ApiError('notImplemented', `${operationId} is not available in this build yet.`);
  });
}
