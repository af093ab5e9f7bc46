/**
 * The operation table, keyed by operationId. `defineOperationTable` makes `tsc` fail when an
 * operation of openapi.yaml has no handler, a handler has no operation, or a handler is typed for
 * another operation (see test/types/operation-table.fixture.ts).
 */
import * as health from './health';
import * as setup from './setup';
import * as lifecycle from './lifecycle';
import * as audit from './audit';
import * as registration from './registration';
import * as tenant from './tenant';
import * as decision from './decision';
import * as boards from './boards';
import * as events from './events';
import * as webhooks from './webhooks';
import * as invitations from './invitations';
import * as consoleSignIn from './console';
import * as roles from './roles';
import * as directory from './directory';
import * as scim from './scim';
import * as domains from './domains';
import * as clients from './clients';
import * as sso from './sso';
import { defineOperationTable } from './types';

export const handlers = defineOperationTable({
  ...health,
  ...setup,
  ...lifecycle,
  ...audit,
  ...registration,
  ...tenant,
  ...decision,
  ...boards,
  ...events,
  ...webhooks,
  ...invitations,
  ...consoleSignIn,
  ...roles,
  ...directory,
  ...scim,
  ...domains,
  ...clients,
  ...sso,
});
