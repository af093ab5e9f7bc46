/**
 * Every action the service records (docs/events.md#events-and-webhooks), in one list that the
 * domain, the webhook filters and the console (its event-log filters, through the
 * `@service/context` alias) read. The lifecycle's transitions bring their own events
 * (./tenant-status.ts): a state added there needs no line here. Plain constants, so the browser
 * bundle can take them as they are.
 */
import { LIFECYCLE_EVENTS, type LifecycleEvent } from './tenant-status';

const ACTIONS = [
  'tenant.created',
  'tenant.registered',
  'tenant.updated',
  'tenant.deletion_started',
  'tenant.deleted',
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
  'member.updated',
  'member.deactivated',
  'member.reactivated',
  'group.created',
  'group.updated',
  'group.deleted',
  'scim_token.created',
  'scim_token.revoked',
  'domain.claimed',
  'domain.verified',
  'domain.lapsed',
  'domain.removed',
  'domain.updated',
  'member.joined_by_domain',
  'client.created',
  'client.updated',
  'client.deleted',
  'sso_connection.created',
  'sso_connection.updated',
  'sso_connection.deleted',
  'sso_settings.updated',
  'user.signed_in',
  'user.sign_in_failed',
] as const;

export type EventAction = (typeof ACTIONS)[number] | LifecycleEvent;

export const EVENT_ACTIONS: readonly EventAction[] = [...ACTIONS, ...LIFECYCLE_EVENTS.filter((e) => !(ACTIONS as readonly string[]).includes(e))];
