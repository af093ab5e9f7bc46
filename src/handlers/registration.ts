/**
 * Tag `registration`: self-service tenant registration. A token is needed, a tenant is not.
 */
import type {
  GetRegistrationStatusResponses,
  ListMyTenantsResponses,
  RegisterTenantData,
  RegisterTenantResponses,
} from '../../generated/types.gen';
import type { AuthenticatedContext } from '../context/request';
import { adminInstructions, dashboardUrl, listCallerMemberships, registerTenantForCaller, type Registrant } from '../domain/registration';
import { authenticated, type HandlerInput, type Reply } from './types';

function registrantOf(ctx: AuthenticatedContext): Registrant {
  const { issuer, subject, email, emailVerified, name } = ctx.caller;
  return { issuer, subject, email, emailVerified, name };
}

export const getRegistrationStatus = authenticated(async (ctx): Promise<Reply<GetRegistrationStatusResponses>> => ({
  status: 200,
  body: {
    enabled: ctx.config.multiTenantMode,
    requires_approval: ctx.config.registrationRequiresApproval,
    max_tenants_per_user: ctx.config.maxTenantsPerUser,
    allowed_domains: ctx.config.registrationAllowedDomains ? [...ctx.config.registrationAllowedDomains] : null,
  },
}));

export const registerTenant = authenticated(
  async (ctx, input: HandlerInput<RegisterTenantData>): Promise<Reply<RegisterTenantResponses>> => {
    const b = input.body;
    const registration = await registerTenantForCaller(ctx.services.db, ctx.origin, ctx.config, registrantOf(ctx), {
      organizationName: b.organization_name,
      organizationSlug: b.organization_slug,
      adminEmail: b.admin_email,
      adminName: b.admin_name,
      useCase: b.use_case,
      organizationSize: b.organization_size,
      metadata: b.metadata,
      includeSampleData: b.include_sample_data,
    });
    ctx.log.info(
      {
        tenant_id: registration.tenantId,
        tenant_slug: registration.slug,
        status: registration.status,
        subject: ctx.caller.subject,
        issuer: ctx.caller.issuer,
        slug_generated: registration.slugGenerated,
      },
      'Tenant registered',
    );
    return {
      status: 201,
      body: {
        tenant_id: registration.tenantId,
        organization_name: registration.organizationName,
        tenant_slug: registration.slug,
        status: registration.status,
        admin_instructions: adminInstructions(registration.slug, registration.status),
        dashboard_url: dashboardUrl(ctx.config.frontendBaseUrl, registration.slug),
        api_access: {
          tenant_header: `X-Tenant: ${registration.slug}`,
          graphql_endpoint: ctx.config.graphqlPath,
          api_base_url: '/api',
          authentication_required: true,
        },
      },
    };
  },
);

export const listMyTenants = authenticated(async (ctx): Promise<Reply<ListMyTenantsResponses>> => {
  const memberships = await listCallerMemberships(ctx.services.db, registrantOf(ctx));
  return {
    status: 200,
    body: {
      tenants: memberships.map((m) => ({
        tenant_id: m.tenantId,
        name: m.name,
        slug: m.slug,
        status: m.status,
        role: m.role,
        permissions: [...m.permissions],
        joined_at: m.joinedAt.toISOString(),
      })),
    },
  };
});
