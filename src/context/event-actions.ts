/**
 * Every action the service records (docs/events.md#events-and-webhooks), in one list that the
 * domain, the webhook filters and the console (its event-log filters, through the
 * `@service/context` alias) read. A plain constant with no imports, so the browser bundle can take
 * it as it is.
 */
export const EVENT_ACTIONS = [
  'tenant.created',
  'tenant.registered',
  'tenant.updated',
  'tenant.approved',
  'tenant.deletion_started',
  'tenant.deleted',
  'tenant.suspended',
  'tenant.reactivated',
  'tenant.deletion_scheduled',
  'tenant.deletion_cancelled',
  'tenant.exported',
  'tenant.imported',
  'member.added',
  'member.provisioned',
  'member.role_changed',
  'member.removed',
  'member.left',
  'invitation.created',
  'invitation.resent',
  'invitation.revoked',
  'invitation.accepted',
  'webhook.created',
  'webhook.updated',
  'webhook.deleted',
  'board.created',
  'tenant_token.key_rotated',
  'sign_in_link.created',
  'sign_in_link.redeemed',
  'permission.created',
  'permission.deleted',
  'role.created',
  'role.updated',
  'role.deleted',
] as const;
export type EventAction = (typeof EVENT_ACTIONS)[number];
