/**
 * The handler map, keyed by operationId. Its type makes `tsc` fail when an operation of
 * openapi.yaml has no handler or a handler has no operation.
 */
import * as health from './health';
import * as setup from './setup';
import * as audit from './audit';
import * as registration from './registration';
import * as tenant from './tenant';
import * as boards from './boards';
import type { Handler, OperationId } from './types';

export const handlers: { readonly [K in OperationId]: Handler } = {
  ...health,
  ...setup,
  ...audit,
  ...registration,
  ...tenant,
  ...boards,
};
