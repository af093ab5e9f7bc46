/**
 * What moving a tenant leaves behind (docs/operations.md#moving-a-tenant-between-deployments):
 * the notes an import answers with, so whoever moves a tenant learns at once what to set up
 * again on the importing deployment. Secrets never travel in an export file.
 */

export type NotMovedItem = 'scim_tokens' | 'identity_provider_secrets' | 'webhook_secrets' | 'invitation_tokens';

export interface NotMovedNote {
  readonly item: NotMovedItem;
  readonly detail: string;
}

export const NOT_MOVED: readonly NotMovedNote[] = [
  {
    item: 'scim_tokens',
    detail:
      "The tenant's SCIM tokens stayed on the old deployment (secrets). Its directory settings, users and groups moved: mint a token here (POST /api/tenant/scim/tokens, or tenantctl scim tokens create) and give it to the directory with this deployment's base_url (GET /api/tenant/scim). Until a token exists the tenant is not directory-managed.",
  },
  {
    item: 'identity_provider_secrets',
    detail:
      "Sign-in settings are each deployment's own and not in the file: the identity provider configuration (SERVICE_JWT_*, the console's SERVICE_CONSOLE_*) and any client secret at the provider. The tenant's claims_issuer and identity links moved: this deployment must accept tokens of the same issuers.",
  },
  {
    item: 'webhook_secrets',
    detail:
      'Webhook endpoints and their signing secrets are the platform\'s, not the tenant\'s: create the endpoints here (POST /api/setup/webhooks) and give their receivers the new secrets.',
  },
  {
    item: 'invitation_tokens',
    detail: 'Pending invitations arrived without their tokens (only hashes existed, and they stay): resend them (POST /api/tenant/invitations/{invitation_id}/resend).',
  },
];
