/**
 * The generated hey-api client (generated/) against a listening server, for EVERY operation of
 * openapi.yaml: each call succeeds with the status the contract documents, and each response
 * (status, headers, body) is validated against openapi.yaml with `contractProblem`. A few error
 * answers go through the client too, typed as its `error`. The test fails if an operation is
 * added to the contract without being driven here.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createClient, type Client } from '../generated/client';
import * as sdk from '../generated/sdk.gen';
import { LOCAL_ISSUER } from '../src/auth/local-keys';
import { handlers } from '../src/handlers';
import { startTestApp, type TestApp } from './helpers/app';
import { contractProblem } from './helpers/contract';
import { adminToken, closeOwnerConnection, tenantWithMember, tokenFor, unique } from './factories';

let t: TestApp;
let server: http.Server;
let client: Client;
const exercised = new Set<string>();

beforeAll(async () => {
  t = await startTestApp({ SERVICE_MULTI_TENANT_MODE: 'true' });
  server = http.createServer(t.app);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  client = createClient({ baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}` });
});

afterAll(async () => {
  await new Promise<void>((r) => server.close(() => r()));
  await t.close();
  await closeOwnerConnection();
});

interface Outcome {
  data?: unknown;
  error?: unknown;
  response: Response;
  request: Request;
}

/** Checks one client call against the contract and the expected status; returns its data. */
async function call<T extends Outcome>(operationId: keyof typeof sdk, status: number, pending: Promise<T>): Promise<T> {
  const r = await pending;
  const body = r.response.status === 204 ? undefined : (r.data ?? r.error);
  const problem = contractProblem(r.request.method, r.request.url, {
    status: r.response.status,
    headers: Object.fromEntries(r.response.headers),
    body,
  });
  expect({ operationId, problem }).toEqual({ operationId, problem: null });
  expect({ operationId, status: r.response.status, body: r.response.status === status ? 'ok' : body }).toEqual({ operationId, status, body: 'ok' });
  if (status < 400) exercised.add(operationId);
  return r;
}

describe('the generated client drives every operation', () => {
  it('health, setup, audit, registration, tenant, boards, events, webhooks, roles and lifecycle', async () => {
    const admin = { Authorization: `Bearer ${adminToken()}` };
    const { tenant, user, token } = await tenantWithMember('admin');
    const member = { Authorization: `Bearer ${token}`, 'X-Tenant': tenant.slug };

    // health
    await call('getHealth', 200, sdk.getHealth({ client }));
    await call('getReadiness', 200, sdk.getReadiness({ client }));
    const jwks = await call('getJwks', 200, sdk.getJwks({ client }));
    // The local provider's key and the tenant-token keys.
    expect(jwks.data!.keys.length).toBeGreaterThanOrEqual(2);
    const metrics = await call('getMetrics', 200, sdk.getMetrics({ client, parseAs: 'text' }));
    expect(String(metrics.data)).toContain('# TYPE tenant_service_http_request_duration_seconds histogram');

    // setup
    await call('getSetupStatus', 200, sdk.getSetupStatus({ client, headers: admin }));
    const rotated = await call('rotateTenantTokenKeys', 200, sdk.rotateTenantTokenKeys({ client, headers: admin }));
    expect(rotated.data!.previous_kid).not.toBe(rotated.data!.kid);
    const slug = unique('client');
    const created = await call('createTenant', 201, sdk.createTenant({ client, headers: admin, body: { name: 'Client Co', slug, settings: { billing_plan: 'pro' } } }));
    const id = created.data!.tenant_id;
    const listed = await call('listTenants', 200, sdk.listTenants({ client, headers: admin, query: { q: slug, limit: 10 } }));
    expect(listed.data!.tenants.map((x) => x.slug)).toEqual([slug]);
    const got = await call('getTenant', 200, sdk.getTenant({ client, headers: admin, path: { tenant_id: id } }));
    expect(got.data!.settings).toEqual({ billing_plan: 'pro' });
    const updated = await call('updateTenant', 200, sdk.updateTenant({ client, headers: admin, path: { tenant_id: id }, body: { name: 'Client Co 2' } }));
    expect(updated.data!.name).toBe('Client Co 2');
    const audit = await call('auditTenants', 200, sdk.auditTenants({ client, headers: admin, query: { tenant_slug: slug } }));
    expect(audit.data!.tenants.map((x) => x.slug)).toEqual([slug]);
    const preview = await call('getTenantDeletionPreview', 200, sdk.getTenantDeletionPreview({ client, headers: admin, path: { tenant_id: id } }));
    expect(preview.data).toMatchObject({ tenant_id: id, rows: expect.any(Object) });
    const dry = await call('deleteTenant', 200, sdk.deleteTenant({ client, headers: admin, path: { tenant_id: id }, query: { dry_run: true } }));
    expect(dry.data).toMatchObject({ dry_run: true, tenant_id: id });
    const deleted = await call('deleteTenant', 200, sdk.deleteTenant({ client, headers: admin, path: { tenant_id: id } }));
    expect(deleted.data).toMatchObject({ tenant_id: id });
    // an error through the client: typed as `error`, still the contract's Error body
    const gone = await call('getTenant', 404, sdk.getTenant({ client, headers: admin, path: { tenant_id: id } }));
    expect(gone.error).toMatchObject({ error: 'Tenant not found' });

    // registration
    await call('getRegistrationStatus', 200, sdk.getRegistrationStatus({ client, headers: { Authorization: `Bearer ${tokenFor()}` } }));
    const registrant = { Authorization: `Bearer ${tokenFor({ sub: unique('founder'), email: 'founder@client.example' })}` };
    const reg = await call(
      'registerTenant',
      201,
      sdk.registerTenant({ client, headers: registrant, body: { organization_name: 'Registered Co', admin_email: 'founder@client.example', include_sample_data: false } }),
    );
    const mine = await call('listMyTenants', 200, sdk.listMyTenants({ client, headers: registrant }));
    expect(mine.data!.tenants.map((x) => x.slug)).toEqual([reg.data!.tenant_slug]);

    // tenant-scoped
    const current = await call('getCurrentTenant', 200, sdk.getCurrentTenant({ client, headers: member }));
    const tenantToken = await call('issueTenantToken', 200, sdk.issueTenantToken({ client, headers: member }));
    expect(tenantToken.data).toEqual(expect.objectContaining({ token_type: 'Bearer', tenant_id: tenant.id, role: 'admin' }));
    expect(current.data!.tenant.slug).toBe(tenant.slug);
    const decision = await call('decideTenantAccess', 200, sdk.decideTenantAccess({ client, headers: member, query: { role: 'admin' } }));
    expect(decision.response.headers.get('x-tenant-id')).toBe(tenant.id);
    expect(decision.data).toMatchObject({ tenant_id: tenant.id, user_id: user.id, tenant_role: 'admin' });
    const decisionRefused = await call('decideTenantAccess', 403, sdk.decideTenantAccess({ client, headers: { ...member, 'X-Tenant': unique('missing') } }));
    expect(decisionRefused.error).toMatchObject({ error: 'Tenant not found' });
    expect(decisionRefused.response.headers.get('x-tenant-error')).toBe('Tenant not found');
    const members = await call('listMembers', 200, sdk.listMembers({ client, headers: member }));
    expect(members.data!.members.map((m) => m.user_id)).toContain(user.id);
    // Direct adds are the platform admin's; a tenant admin is refused (403).
    const newbie = { subject: unique('newbie'), issuer: LOCAL_ISSUER, email: 'newbie@client.example', role: 'member' as const };
    const refused = await call('addMember', 403, sdk.addMember({ client, headers: member, body: newbie }));
    expect(refused.error).toMatchObject({ error: 'Forbidden' });
    const added = await call('addMember', 201, sdk.addMember({ client, headers: { ...admin, 'X-Tenant': tenant.slug }, body: newbie }));
    await call('removeMember', 204, sdk.removeMember({ client, headers: member, path: { user_id: added.data!.user_id } }));
    const leaver = await call('addMember', 201, sdk.addMember({ client, headers: { ...admin, 'X-Tenant': tenant.slug }, body: { ...newbie, subject: unique('leaver') } }));
    const left = await call(
      'leaveTenant',
      200,
      sdk.leaveTenant({ client, headers: { Authorization: `Bearer ${tokenFor({ sub: leaver.data!.subject })}`, 'X-Tenant': tenant.slug } }),
    );
    expect(left.data).toMatchObject({ tenant_id: tenant.id, tenant_slug: tenant.slug, membership: { user_id: leaver.data!.user_id }, revoked_invitations: 0 });
    const board = await call('createBoard', 201, sdk.createBoard({ client, headers: member, body: { name: 'Client board', description: 'from the SDK' } }));
    const boards = await call('listBoards', 200, sdk.listBoards({ client, headers: member }));
    expect(boards.data!.boards.map((b) => b.board_id)).toContain(board.data!.board_id);
    const one = await call('getBoard', 200, sdk.getBoard({ client, headers: member, path: { board_id: board.data!.board_id } }));
    expect(one.data!.name).toBe('Client board');

    // invitations
    const invited = await call('createInvitation', 201, sdk.createInvitation({ client, headers: member, body: { email: 'invitee@client.example', role: 'member' } }));
    expect(invited.data).toMatchObject({ status: 'pending', delivery: 'not_configured', accept_url: null });
    const invitations = await call('listInvitations', 200, sdk.listInvitations({ client, headers: member, query: { status: 'pending' } }));
    expect(invitations.data!.invitations.map((i) => i.invitation_id)).toEqual([invited.data!.invitation_id]);
    const resent = await call('resendInvitation', 200, sdk.resendInvitation({ client, headers: member, path: { invitation_id: invited.data!.invitation_id } }));
    const invitee = { Authorization: `Bearer ${tokenFor({ sub: unique('invitee'), email: 'invitee@client.example' })}` };
    const stale = await call('acceptInvitation', 404, sdk.acceptInvitation({ client, headers: invitee, body: { token: invited.data!.token } }));
    expect(stale.error).toMatchObject({ error: 'Invitation not found' });
    const joined = await call('acceptInvitation', 200, sdk.acceptInvitation({ client, headers: invitee, body: { token: resent.data!.token } }));
    expect(joined.data!.tenant.slug).toBe(tenant.slug);
    const second = await call('createInvitation', 201, sdk.createInvitation({ client, headers: member, body: { email: 'second@client.example' } }));
    const revoked = await call('revokeInvitation', 200, sdk.revokeInvitation({ client, headers: member, path: { invitation_id: second.data!.invitation_id } }));
    expect(revoked.data!.status).toBe('revoked');
    const promoted = await call('updateMemberRole', 200, sdk.updateMemberRole({ client, headers: member, path: { user_id: joined.data!.membership.user_id }, body: { role: 'admin' } }));
    expect(promoted.data!.role).toBe('admin');
    const unknown = await call(
      'updateMemberRole',
      404,
      sdk.updateMemberRole({ client, headers: member, path: { user_id: '00000000-0000-4000-8000-000000000000' }, body: { role: 'member' } }),
    );
    expect(unknown.error).toMatchObject({ error: 'Not found' });

    const missing = await call('getCurrentTenant', 400, sdk.getCurrentTenant({ client, headers: { Authorization: `Bearer ${tokenFor({ sub: user.subject })}` } }));
    expect(missing.error).toMatchObject({ error: 'Missing X-Tenant header', multi_tenant_mode: true });

    // events and webhooks
    const events = await call('listEvents', 200, sdk.listEvents({ client, headers: admin, query: { tenant_id: id, limit: 10 } }));
    expect(events.data!.events.map((e) => e.action)).toContain('tenant.created');
    const tenantEvents = await call('listTenantEvents', 200, sdk.listTenantEvents({ client, headers: member, query: { action: 'board.created' } }));
    expect(tenantEvents.data!.events.map((e) => e.target.id)).toContain(board.data!.board_id);
    const hook = await call(
      'createWebhook',
      201,
      sdk.createWebhook({ client, headers: admin, body: { url: 'http://192.0.2.1:9/client-hook', events: ['tenant.*'], enabled: false } }),
    );
    expect(hook.data!.secret).toMatch(/^whsec_/);
    const hookId = hook.data!.webhook_id;
    const hooks = await call('listWebhooks', 200, sdk.listWebhooks({ client, headers: admin }));
    expect(hooks.data!.webhooks.map((w) => w.webhook_id)).toContain(hookId);
    await call('getWebhook', 200, sdk.getWebhook({ client, headers: admin, path: { webhook_id: hookId } }));
    await call('updateWebhook', 200, sdk.updateWebhook({ client, headers: admin, path: { webhook_id: hookId }, body: { description: 'from the SDK' } }));
    const sent = await call('listWebhookDeliveries', 200, sdk.listWebhookDeliveries({ client, headers: admin, path: { webhook_id: hookId } }));
    expect(sent.data!.deliveries).toEqual([]);
    await call('deleteWebhook', 204, sdk.deleteWebhook({ client, headers: admin, path: { webhook_id: hookId } }));

    // console sign-in: a code for the member's own token, exchanged once (no bearer token)
    const code = await call('createConsoleCode', 201, sdk.createConsoleCode({ client, headers: { Authorization: member.Authorization }, body: { expires_in: 60 } }));
    const session = await call('createConsoleSession', 200, sdk.createConsoleSession({ client, body: { code: code.data!.code } }));
    expect(session.data!.access_token).toBe(token);

    // roles and permissions: the catalogue, a platform role, a tenant's own role
    const perm = `${unique('sdk').replace(/-/g, '')}:write`;
    await call('createPermission', 201, sdk.createPermission({ client, headers: admin, body: { key: perm, description: 'from the SDK' } }));
    const perms = await call('listPermissions', 200, sdk.listPermissions({ client, headers: admin }));
    expect(perms.data!.permissions.map((p) => p.key)).toContain(perm);
    const platformRole = unique('sdk-role');
    await call('createPlatformRole', 201, sdk.createPlatformRole({ client, headers: admin, body: { key: platformRole, name: 'SDK role', permissions: [perm] } }));
    await call('listPlatformRoles', 200, sdk.listPlatformRoles({ client, headers: admin }));
    await call('getPlatformRole', 200, sdk.getPlatformRole({ client, headers: admin, path: { role_key: platformRole } }));
    await call('updatePlatformRole', 200, sdk.updatePlatformRole({ client, headers: admin, path: { role_key: platformRole }, body: { name: 'SDK role 2', permissions: [] } }));
    await call('deletePlatformRole', 200, sdk.deletePlatformRole({ client, headers: admin, path: { role_key: platformRole } }));
    const tenantRole = unique('sdk-own');
    await call('createTenantRole', 201, sdk.createTenantRole({ client, headers: member, body: { key: tenantRole, name: 'Own role', permissions: [perm] } }));
    await call('listTenantRoles', 200, sdk.listTenantRoles({ client, headers: member }));
    await call('getTenantRole', 200, sdk.getTenantRole({ client, headers: member, path: { role_key: tenantRole } }));
    await call('updateTenantRole', 200, sdk.updateTenantRole({ client, headers: member, path: { role_key: tenantRole }, body: { name: 'Own role 2', permissions: [] } }));
    await call('deleteTenantRole', 200, sdk.deleteTenantRole({ client, headers: member, path: { role_key: tenantRole } }));
    await call('deletePermission', 200, sdk.deletePermission({ client, headers: admin, path: { permission_key: perm } }));

    // directory sync: settings and a SCIM token, revoked again (the tenant stops being directory-managed)
    await call('updateScimSettings', 200, sdk.updateScimSettings({ client, headers: member, body: { group_roles: [{ group: 'SDK admins', role: 'admin' }], external_id_claim: null } }));
    const scimToken = await call('createScimToken', 201, sdk.createScimToken({ client, headers: member, body: { description: 'from the SDK' } }));
    expect(scimToken.data!.token).toMatch(/^scim_/);
    const scimTokens = await call('listScimTokens', 200, sdk.listScimTokens({ client, headers: member }));
    expect(scimTokens.data!.tokens.map((x) => x.token_id)).toContain(scimToken.data!.token_id);
    const scimSettings = await call('getScimSettings', 200, sdk.getScimSettings({ client, headers: member }));
    expect(scimSettings.data!.enabled).toBe(true);
    // SCIM, with the tenant's token (no JWT, no X-Tenant)
    const scim = { Authorization: `Bearer ${scimToken.data!.token}` };
    await call('getScimServiceProviderConfig', 200, sdk.getScimServiceProviderConfig({ client, headers: scim }));
    await call('listScimResourceTypes', 200, sdk.listScimResourceTypes({ client, headers: scim }));
    await call('listScimSchemas', 200, sdk.listScimSchemas({ client, headers: scim }));
    const sdkUserName = `${unique('sdk-scim')}@client.example`;
    const scimUser = await call('createScimUser', 201, sdk.createScimUser({ client, headers: scim, body: { userName: sdkUserName, active: true } }));
    const scimUserId = scimUser.data!.id;
    const foundUsers = await call('listScimUsers', 200, sdk.listScimUsers({ client, headers: scim, query: { filter: `userName eq "${sdkUserName}"`, startIndex: 1, count: 100 } }));
    expect(foundUsers.data!.totalResults).toBe(1);
    await call('getScimUser', 200, sdk.getScimUser({ client, headers: scim, path: { id: scimUserId } }));
    await call('replaceScimUser', 200, sdk.replaceScimUser({ client, headers: scim, path: { id: scimUserId }, body: { userName: sdkUserName, displayName: 'SDK', active: true } }));
    const patchedUser = await call('updateScimUser', 200, sdk.updateScimUser({ client, headers: scim, path: { id: scimUserId }, body: { schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'], Operations: [{ op: 'Replace', path: 'active', value: 'False' }] } }));
    expect(patchedUser.data!.active).toBe(false);
    const scimGroup = await call('createScimGroup', 201, sdk.createScimGroup({ client, headers: scim, body: { displayName: 'SDK admins', members: [{ value: scimUserId }] } }));
    await call('listScimGroups', 200, sdk.listScimGroups({ client, headers: scim, query: { filter: 'displayName eq "SDK admins"', excludedAttributes: 'members' } }));
    await call('getScimGroup', 200, sdk.getScimGroup({ client, headers: scim, path: { id: scimGroup.data!.id } }));
    await call('replaceScimGroup', 200, sdk.replaceScimGroup({ client, headers: scim, path: { id: scimGroup.data!.id }, body: { displayName: 'SDK admins', members: [] } }));
    await call('updateScimGroup', 200, sdk.updateScimGroup({ client, headers: scim, path: { id: scimGroup.data!.id }, body: { schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'], Operations: [{ op: 'Add', path: 'members', value: [{ value: scimUserId }] }] } }));
    await call('deleteScimGroup', 204, sdk.deleteScimGroup({ client, headers: scim, path: { id: scimGroup.data!.id } }));
    await call('deleteScimUser', 204, sdk.deleteScimUser({ client, headers: scim, path: { id: scimUserId } }));
    const refusedScim = await call('getScimUser', 404, sdk.getScimUser({ client, headers: scim, path: { id: scimUserId } }));
    expect(refusedScim.error).toMatchObject({ schemas: ['urn:ietf:params:scim:api:messages:2.0:Error'], status: '404' });
    await call('revokeScimToken', 204, sdk.revokeScimToken({ client, headers: member, path: { token_id: scimToken.data!.token_id } }));

    // lifecycle: suspend, reactivate, schedule and cancel a deletion, export, delete, import again
    const moving = await call('createTenant', 201, sdk.createTenant({ client, headers: admin, body: { name: 'Moving Co', slug: unique('moving') } }));
    const movingId = moving.data!.tenant_id;
    await call('suspendTenant', 200, sdk.suspendTenant({ client, headers: admin, path: { tenant_id: movingId }, body: { reason: 'Invoice unpaid' } }));
    await call('reactivateTenant', 200, sdk.reactivateTenant({ client, headers: admin, path: { tenant_id: movingId } }));
    await call('scheduleTenantDeletion', 200, sdk.scheduleTenantDeletion({ client, headers: admin, path: { tenant_id: movingId }, body: { grace_days: 7 } }));
    await call('cancelTenantDeletion', 200, sdk.cancelTenantDeletion({ client, headers: admin, path: { tenant_id: movingId } }));
    const exported = await call('exportTenant', 200, sdk.exportTenant({ client, headers: admin, path: { tenant_id: movingId }, parseAs: 'text' }));
    const file = exported.data as unknown as string;
    await call('deleteTenant', 200, sdk.deleteTenant({ client, headers: admin, path: { tenant_id: movingId } }));
    const imported = await call('importTenant', 201, sdk.importTenant({ client, headers: admin, body: file, bodySerializer: (b: unknown) => b as string }));
    expect(imported.data!.tenant_id).toBe(movingId);

    // every operation of the contract was driven successfully
    expect([...exercised].sort()).toEqual(Object.keys(handlers).sort());
  });
});
