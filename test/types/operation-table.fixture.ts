/**
 * Type-level fixture, checked by `npm run typecheck` (never run): each `@ts-expect-error` below
 * proves that tsc refuses one kind of mismatch between the operation table and openapi.yaml.
 * If a mismatch ever compiles, its directive is unused and the typecheck fails.
 */
import type { ListBoardsData, ListBoardsResponses } from '../../generated/types.gen';
import * as boards from '../../src/handlers/boards';
import * as health from '../../src/handlers/health';
import * as registration from '../../src/handlers/registration';
import * as setup from '../../src/handlers/setup';
import * as lifecycle from '../../src/handlers/lifecycle';
import * as audit from '../../src/handlers/audit';
import * as tenant from '../../src/handlers/tenant';
import * as decision from '../../src/handlers/decision';
import * as events from '../../src/handlers/events';
import * as webhooks from '../../src/handlers/webhooks';
import * as invitations from '../../src/handlers/invitations';
import * as consoleSignIn from '../../src/handlers/console';
import * as roles from '../../src/handlers/roles';
import * as directory from '../../src/handlers/directory';
import * as scim from '../../src/handlers/scim';
import * as domains from '../../src/handlers/domains';
import * as clients from '../../src/handlers/clients';
import * as sso from '../../src/handlers/sso';
import { authenticated, defineOperationTable, tenantScoped, type HandlerInput, type Reply } from '../../src/handlers/types';

const complete = { ...health, ...setup, ...lifecycle, ...audit, ...registration, ...tenant, ...decision, ...boards, ...invitations, ...events, ...webhooks, ...consoleSignIn, ...roles, ...directory, ...scim, ...domains, ...clients, ...sso };

// The real table compiles.
export const ok = defineOperationTable(complete);

// 1. A missing handler.
const { listMembers: _dropped, ...missingOne } = complete;
// @ts-expect-error listMembers has no handler
export const missing = defineOperationTable(missingOne);

// 2. An extra handler (no operation of that id in openapi.yaml).
// @ts-expect-error exportBoards is not an operation
export const extra = defineOperationTable({ ...complete, exportBoards: boards.listBoards });

// 3. A handler typed for another operation: listMembers written with listBoards' input and reply.
const listMembersTypedAsListBoards = tenantScoped(
  async (ctx, input: HandlerInput<ListBoardsData>): Promise<Reply<ListBoardsResponses>> => ({
    status: 200,
    body: { boards: [], next_cursor: input.query.cursor ?? null },
  }),
);
// @ts-expect-error the handler's input and reply are listBoards', not listMembers'
export const wrongOperation = defineOperationTable({ ...complete, listMembers: listMembersTypedAsListBoards });

// 3b. The same input/reply shape is not enough: listMembers and listBoards take the same query,
// and the input's `url` (the operation's path template) still tells them apart.
const sameShapeOtherOperation = tenantScoped(async (_ctx, _input: HandlerInput<ListBoardsData>) => tenant.listMembers.run(_ctx, undefined as never));
// @ts-expect-error the input is typed for /api/boards
export const wrongUrl = defineOperationTable({ ...complete, listMembers: sameShapeOtherOperation });

// 4. A handler whose context does not fit x-access: a tenant operation served without a tenant.
// @ts-expect-error listBoards is x-access tenantMember: it needs a tenant handler
export const wrongAccess = defineOperationTable({ ...complete, listBoards: authenticated(async () => ({ status: 200 as const, body: { boards: [], next_cursor: null } })) });
