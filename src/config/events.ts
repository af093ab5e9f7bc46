/** The audit log and webhooks: retention, the settings keys events copy, the networks webhooks may reach. */
import type { EnvReader } from './env-reader';

export interface EventsConfig {
  /** SERVICE_EVENT_RETENTION_DAYS: how long audit-log events are kept (daily purge). */
  readonly eventRetentionDays: number;
  /** SERVICE_EVENT_SETTINGS_KEYS: the tenant settings / registration metadata keys whose values events copy. */
  readonly eventSettingsKeys: readonly string[];
  /** SERVICE_WEBHOOK_ALLOW_PRIVATE_NETWORKS: webhook URLs may reach loopback/private/link-local addresses. */
  readonly webhookAllowPrivateNetworks: boolean;
  /** SERVICE_SSO_ALLOW_PRIVATE_NETWORKS: SSO's outgoing requests may use http and reach loopback/private addresses (docs/sso.md). */
  readonly ssoAllowPrivateNetworks: boolean;
}

export function readEventsConfig(env: EnvReader): EventsConfig {
  const eventRetentionDays = env.int('SERVICE_EVENT_RETENTION_DAYS', 1, 36_500) ?? 365;
  const webhookAllowPrivateNetworks = env.bool('SERVICE_WEBHOOK_ALLOW_PRIVATE_NETWORKS', false);
  // Top-level keys, case-sensitive as settings keys are; `none` copies no value at all.
  let eventSettingsKeys = ['admin_email', 'billing_plan', 'features'];
  const esk = env.text('SERVICE_EVENT_SETTINGS_KEYS');
  if (esk !== undefined) {
    eventSettingsKeys = esk.toLowerCase() === 'none' ? [] : [...new Set(esk.split(',').map((k) => k.trim()).filter((k) => k !== ''))];
    for (const k of eventSettingsKeys) {
      if (k.length > 255) env.problems.push(`SERVICE_EVENT_SETTINGS_KEYS: a key is longer than 255 characters ('${k.slice(0, 40)}…')`);
    }
  }
  const ssoAllowPrivateNetworks = env.bool('SERVICE_SSO_ALLOW_PRIVATE_NETWORKS', false);
  return { eventRetentionDays, eventSettingsKeys: Object.freeze(eventSettingsKeys), webhookAllowPrivateNetworks, ssoAllowPrivateNetworks };
}
