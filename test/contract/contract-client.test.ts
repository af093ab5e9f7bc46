/**
 * The generated hey-api client (generated/) against a listening server, for EVERY operation of
 * openapi.yaml: each call succeeds with the status the contract documents, and each response
 * (status, headers, body) is validated against openapi.yaml with `contractProblem`. A few error
 * answers go through the client too, typed as its `error`. The test fails if an operation is
 * added to the contract without being driven here.
 *
 * `npm test` runs it against an app it starts; `npm run test:contract` with CONTRACT_URL and
 * CONTRACT_ADMIN_TOKEN runs it against any running server through the API alone
 * (docs/architecture.md#contract-tests-against-a-running-server): everything it creates is named
 * under one run prefix and deleted at the end, and it checks that no tenant of the run is left.
 */
import { createClient, type Client } from '../../generated/client';
import * as sdk from '../../generated/sdk.gen';
import { handlers } from '../../src/handlers';
import { contractProblem } from '../helpers/contract';
import { contractTarget, type ContractTarget } from '../helpers/contract-target';
import { unique } from '../helpers/factories';
import { makeKeyAndCert } from '../api/sso/helpers/certs';

// One test drives every operation, compiling each one's response check as it meets it: its bound
// (against a hang only) is that of a whole suite, not of one request.
jest.setTimeout(300_000);

let target: ContractTarget;
let client: Client;
const exercised = new Set<string>();
/** Every name this run creates starts with it, so a shared server can be checked and cleaned. */
const run = unique('ctr');
const cleanup = { tenants: new Set<string>(), webhooks: new Set<string>(), permissions: new Set<string>(), platformRoles: new Set<string>(), clients: new Set<string>() };

beforeAll(async () => {
  target = await contractTarget();
  client = createClient({ baseUrl: target.baseUrl });
});

afterAll(async () => {
  if (!target) return;
  // Whatever a failed run left behind: best effort, the test's own checks already ran.
  const headers = { Authorization: `Bearer ${target.adminToken()}` };
  for (const id of cleanup.tenants) await sdk.deleteTenant({ client, headers, path: { tenant_id: id } }).catch(() => undefined);
  for (const id of cleanup.webhooks) await sdk.deleteWebhook({ client, headers, path: { webhook_id: id } }).catch(() => undefined);
  for (const id of cleanup.clients) await sdk.deleteOidcClient({ client, headers, path: { client_id: id } }).catch(() => undefined);
  for (const key of cleanup.platformRoles) await sdk.deletePlatformRole({ client, headers, path: { role_key: key } }).catch(() => undefined);
  for (const key of cleanup.permissions) await sdk.deletePermission({ client, headers, path: { permission_key: key } }).catch(() => undefined);
  await target.close();
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

/** Operations that change the whole server, not only what this run created: driven only on a server the suite started. */
const SERVER_WIDE = new Set<string>(['rotateTenantTokenKeys']);

describe('the generated client drives every operation', () => {
  it('health, setup, audit, registration, tenant, boards, events, webhooks, roles and lifecycle', async () => {
    const admin = { Authorization: `Bearer ${target.adminToken()}` };
    const person = (name: string, email: string) => target.personToken(unique(`${run}-${name}`), email);
    // The tenant most calls act in, and its admin, made through the API.
    const main = await call('createTenant', 201, sdk.createTenant({ client, headers: admin, body: { name: 'Client Co', slug: `${run}-client`, settings: { billing_plan: 'pro' } } }));
    const tenant = { id: main.data!.tenant_id, slug: main.data!.slug };
    cleanup.tenants.add(tenant.id);
    const owner = person('owner', 'owner@client.example');
    const token = owner.token;
    const ownerSub = String(JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8')).sub);
    const ownerAdded = await call(
      'addMember',
      201,
      sdk.addMember({ client, headers: { ...admin, 'X-Tenant': tenant.slug }, body: { subject: ownerSub, issuer: owner.issuer, email: 'owner@client.example', role: 'admin' } }),
    );
    const user = { id: ownerAdded.data!.user_id, subject: ownerSub };
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
    if (!target.remote) {
      const rotated = await call('rotateTenantTokenKeys', 200, sdk.rotateTenantTokenKeys({ client, headers: admin }));
      expect(rotated.data!.previous_kid).not.toBe(rotated.data!.kid);
    }
    // The run's tenant (created above) is the one every setup and lifecycle call acts on: a
    // platform admin may delete 5 tenants an hour, so a run against a server stays within that.
    const { slug, id } = tenant;
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

    // registration
    const registrant = { Authorization: `Bearer ${person('founder', 'founder@client.example').token}` };
    await call('getRegistrationStatus', 200, sdk.getRegistrationStatus({ client, headers: registrant }));
    const reg = await call(
      'registerTenant',
      201,
      sdk.registerTenant({ client, headers: registrant, body: { organization_name: `${run} Registered`, admin_email: 'founder@client.example', include_sample_data: false } }),
    );
    cleanup.tenants.add(reg.data!.tenant_id);
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
    const newbie = { subject: unique(`${run}-newbie`), issuer: owner.issuer, email: 'newbie@client.example', role: 'member' as const };
    const refused = await call('addMember', 403, sdk.addMember({ client, headers: member, body: newbie }));
    expect(refused.error).toMatchObject({ error: 'Forbidden' });
    const added = await call('addMember', 201, sdk.addMember({ client, headers: { ...admin, 'X-Tenant': tenant.slug }, body: newbie }));
    await call('removeMember', 204, sdk.removeMember({ client, headers: member, path: { user_id: added.data!.user_id } }));
    const leaving = person('leaver', 'leaver@client.example');
    const leaverSub = String(JSON.parse(Buffer.from(leaving.token.split('.')[1]!, 'base64url').toString('utf8')).sub);
    const leaver = await call('addMember', 201, sdk.addMember({ client, headers: { ...admin, 'X-Tenant': tenant.slug }, body: { ...newbie, subject: leaverSub, email: 'leaver@client.example' } }));
    const left = await call('leaveTenant', 200, sdk.leaveTenant({ client, headers: { Authorization: `Bearer ${leaving.token}`, 'X-Tenant': tenant.slug } }));
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
    const invitee = { Authorization: `Bearer ${person('invitee', 'invitee@client.example').token}` };
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

    const missing = await call('getCurrentTenant', 400, sdk.getCurrentTenant({ client, headers: { Authorization: `Bearer ${target.personToken(user.subject).token}` } }));
    expect(missing.error).toMatchObject({ error: 'Missing X-Tenant header', multi_tenant_mode: true });

    // events and webhooks
    const events = await call('listEvents', 200, sdk.listEvents({ client, headers: admin, query: { tenant_id: id, action: 'tenant.created', limit: 10 } }));
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
    cleanup.webhooks.add(hookId);
    const hooks = await call('listWebhooks', 200, sdk.listWebhooks({ client, headers: admin }));
    expect(hooks.data!.webhooks.map((w) => w.webhook_id)).toContain(hookId);
    await call('getWebhook', 200, sdk.getWebhook({ client, headers: admin, path: { webhook_id: hookId } }));
    await call('updateWebhook', 200, sdk.updateWebhook({ client, headers: admin, path: { webhook_id: hookId }, body: { description: 'from the SDK' } }));
    const sent = await call('listWebhookDeliveries', 200, sdk.listWebhookDeliveries({ client, headers: admin, path: { webhook_id: hookId } }));
    expect(sent.data!.deliveries).toEqual([]);
    await call('deleteWebhook', 204, sdk.deleteWebhook({ client, headers: admin, path: { webhook_id: hookId } }));

    // the applications that sign people in (a confidential client: its secret shown once, and at a rotation)
    const app = await call('createOidcClient', 201, sdk.createOidcClient({ client, headers: admin, body: { name: `${run} app`, type: 'confidential', redirect_uris: ['https://app.example.com/cb'] } }));
    const clientId = app.data!.client_id;
    cleanup.clients.add(clientId);
    const apps = await call('listOidcClients', 200, sdk.listOidcClients({ client, headers: admin }));
    expect(apps.data!.clients.map((c) => c.client_id)).toContain(clientId);
    await call('getOidcClient', 200, sdk.getOidcClient({ client, headers: admin, path: { client_id: clientId } }));
    const rotated = await call('updateOidcClient', 200, sdk.updateOidcClient({ client, headers: admin, path: { client_id: clientId }, body: { rotate_secret: true } }));
    expect(rotated.data!.client_secret).not.toBe(app.data!.client_secret);
    await call('deleteOidcClient', 204, sdk.deleteOidcClient({ client, headers: admin, path: { client_id: clientId } }));
    cleanup.clients.delete(clientId);

    // console sign-in: a code for the member's own token, exchanged once (no bearer token)
    const code = await call('createConsoleCode', 201, sdk.createConsoleCode({ client, headers: { Authorization: member.Authorization }, body: { expires_in: 60 } }));
    const session = await call('createConsoleSession', 200, sdk.createConsoleSession({ client, body: { code: code.data!.code } }));
    expect(session.data!.access_token).toBe(token);

    // roles and permissions: the catalogue, a platform role, a tenant's own role
    const perm = `${run.replace(/-/g, '')}:write`;
    cleanup.permissions.add(perm);
    await call('createPermission', 201, sdk.createPermission({ client, headers: admin, body: { key: perm, description: 'from the SDK' } }));
    const perms = await call('listPermissions', 200, sdk.listPermissions({ client, headers: admin }));
    expect(perms.data!.permissions.map((p) => p.key)).toContain(perm);
    const platformRole = `${run}-role`;
    cleanup.platformRoles.add(platformRole);
    await call('createPlatformRole', 201, sdk.createPlatformRole({ client, headers: admin, body: { key: platformRole, name: 'SDK role', permissions: [perm] } }));
    await call('listPlatformRoles', 200, sdk.listPlatformRoles({ client, headers: admin }));
    await call('getPlatformRole', 200, sdk.getPlatformRole({ client, headers: admin, path: { role_key: platformRole } }));
    await call('updatePlatformRole', 200, sdk.updatePlatformRole({ client, headers: admin, path: { role_key: platformRole }, body: { name: 'SDK role 2', permissions: [] } }));
    await call('deletePlatformRole', 200, sdk.deletePlatformRole({ client, headers: admin, path: { role_key: platformRole } }));
    const tenantRole = `${run}-own`;
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
    await call('getScimResourceType', 200, sdk.getScimResourceType({ client, headers: scim, path: { name: 'User' } }));
    await call('getScimSchema', 200, sdk.getScimSchema({ client, headers: scim, path: { urn: 'urn:ietf:params:scim:schemas:core:2.0:Group' } }));
    const sdkUserName = `${unique('sdk-scim')}@client.example`;
    const scimUser = await call('createScimUser', 201, sdk.createScimUser({ client, headers: scim, body: { userName: sdkUserName, active: true } }));
    const scimUserId = scimUser.data!.id;
    const foundUsers = await call('listScimUsers', 200, sdk.listScimUsers({ client, headers: scim, query: { filter: `userName eq "${sdkUserName}"`, startIndex: 1, count: 100 } }));
    expect(foundUsers.data!.totalResults).toBe(1);
    const searchedUsers = await call('searchScimUsers', 200, sdk.searchScimUsers({ client, headers: scim, body: { filter: `userName sw "${sdkUserName.slice(0, 8)}"`, attributes: ['userName'] } }));
    expect(searchedUsers.data!.Resources.map((u) => u.userName)).toEqual([sdkUserName]);
    await call('getScimUser', 200, sdk.getScimUser({ client, headers: scim, path: { id: scimUserId } }));
    await call('replaceScimUser', 200, sdk.replaceScimUser({ client, headers: scim, path: { id: scimUserId }, body: { userName: sdkUserName, displayName: 'SDK', active: true } }));
    const patchedUser = await call('updateScimUser', 200, sdk.updateScimUser({ client, headers: scim, path: { id: scimUserId }, body: { schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'], Operations: [{ op: 'Replace', path: 'active', value: 'False' }] } }));
    expect(patchedUser.data!.active).toBe(false);
    const scimGroup = await call('createScimGroup', 201, sdk.createScimGroup({ client, headers: scim, body: { displayName: 'SDK admins', members: [{ value: scimUserId }] } }));
    await call('listScimGroups', 200, sdk.listScimGroups({ client, headers: scim, query: { filter: 'displayName eq "SDK admins"', excludedAttributes: 'members' } }));
    await call('getScimGroup', 200, sdk.getScimGroup({ client, headers: scim, path: { id: scimGroup.data!.id } }));
    await call('searchScimGroups', 200, sdk.searchScimGroups({ client, headers: scim, body: { filter: 'displayName co "SDK"', excludedAttributes: ['members'] } }));
    await call('replaceScimGroup', 200, sdk.replaceScimGroup({ client, headers: scim, path: { id: scimGroup.data!.id }, body: { displayName: 'SDK admins', members: [] } }));
    await call('updateScimGroup', 200, sdk.updateScimGroup({ client, headers: scim, path: { id: scimGroup.data!.id }, body: { schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'], Operations: [{ op: 'Add', path: 'members', value: [{ value: scimUserId }] }] } }));
    const directoryUsers = await call('listDirectoryUsers', 200, sdk.listDirectoryUsers({ client, headers: member }));
    expect(directoryUsers.data!.users.map((u) => u.directory_user_id)).toContain(scimUserId);
    await call('deleteScimGroup', 204, sdk.deleteScimGroup({ client, headers: scim, path: { id: scimGroup.data!.id } }));
    await call('deleteScimUser', 204, sdk.deleteScimUser({ client, headers: scim, path: { id: scimUserId } }));
    const refusedScim = await call('getScimUser', 404, sdk.getScimUser({ client, headers: scim, path: { id: scimUserId } }));
    expect(refusedScim.error).toMatchObject({ schemas: ['urn:ietf:params:scim:api:messages:2.0:Error'], status: '404' });
    await call('revokeScimToken', 204, sdk.revokeScimToken({ client, headers: member, path: { token_id: scimToken.data!.token_id } }));

    // domains: claim, verify (by the suite's DNS server), a platform admin's mark, the join policy, joinable and join, remove
    const domainName = `${run}.client.example`;
    const claimed = await call('claimDomain', 201, sdk.claimDomain({ client, headers: member, body: { domain: domainName } }));
    await call('listDomains', 200, sdk.listDomains({ client, headers: member }));
    await call('getDomain', 200, sdk.getDomain({ client, headers: member, path: { domain: domainName } }));
    if (target.dns) {
      target.dns.set(claimed.data!.verification.name, { txt: [claimed.data!.verification.value] });
      await call('verifyDomain', 200, sdk.verifyDomain({ client, headers: member, path: { domain: domainName } }));
    }
    await call('markDomainVerified', 200, sdk.markDomainVerified({ client, headers: admin, path: { tenant_id: id }, body: { domain: domainName, verified: true } }));
    await call('updateDomain', 200, sdk.updateDomain({ client, headers: member, path: { domain: domainName }, body: { join: 'suggest', join_role: 'member' } }));
    const joiner = { Authorization: `Bearer ${person('joiner', `joiner@${domainName}`).token}` };
    const joinable = await call('listJoinableTenants', 200, sdk.listJoinableTenants({ client, headers: joiner }));
    expect(joinable.data!.tenants.map((x) => x.tenant_id)).toEqual([id]);
    await call('joinTenant', 201, sdk.joinTenant({ client, headers: joiner, path: { tenant_id: id } }));
    await call('removeDomain', 204, sdk.removeDomain({ client, headers: member, path: { domain: domainName } }));

    // single sign-on: a SAML connection (no network needed), required, then not, changed, deleted
    const idpCert = makeKeyAndCert('contract-idp').cert;
    const sso = await call(
      'createSsoConnection',
      201,
      sdk.createSsoConnection({ client, headers: member, body: { type: 'saml', name: `${run} IdP`, idp_entity_id: `https://${run}.idp.example/saml`, idp_sso_url: `https://${run}.idp.example/saml/sso`, idp_certificate: idpCert } }),
    );
    const connectionId = sso.data!.connection_id;
    await call('listSsoConnections', 200, sdk.listSsoConnections({ client, headers: member }));
    await call('getSsoConnection', 200, sdk.getSsoConnection({ client, headers: member, path: { connection_id: connectionId } }));
    await call('updateSsoConnection', 200, sdk.updateSsoConnection({ client, headers: member, path: { connection_id: connectionId }, body: { name: `${run} IdP (renamed)` } }));
    await call('updateSsoSettings', 200, sdk.updateSsoSettings({ client, headers: member, body: { sso_required: true } }));
    expect((await call('getSsoSettings', 200, sdk.getSsoSettings({ client, headers: member }))).data).toMatchObject({ sso_required: true });
    await call('updateSsoSettings', 200, sdk.updateSsoSettings({ client, headers: member, body: { sso_required: false } }));
    await call('deleteSsoConnection', 204, sdk.deleteSsoConnection({ client, headers: member, path: { connection_id: connectionId } }));

    // lifecycle: suspend, reactivate, schedule and cancel a deletion, export, delete, import again
    // (the tenant of the setup calls: deletions count against a platform admin's hourly limit)
    await call('suspendTenant', 200, sdk.suspendTenant({ client, headers: admin, path: { tenant_id: id }, body: { reason: 'Invoice unpaid' } }));
    await call('reactivateTenant', 200, sdk.reactivateTenant({ client, headers: admin, path: { tenant_id: id } }));
    await call('scheduleTenantDeletion', 200, sdk.scheduleTenantDeletion({ client, headers: admin, path: { tenant_id: id }, body: { grace_days: 7 } }));
    await call('cancelTenantDeletion', 200, sdk.cancelTenantDeletion({ client, headers: admin, path: { tenant_id: id } }));
    const exported = await call('exportTenant', 200, sdk.exportTenant({ client, headers: admin, path: { tenant_id: id }, parseAs: 'text' }));
    const file = exported.data as unknown as string;
    const deleted = await call('deleteTenant', 200, sdk.deleteTenant({ client, headers: admin, path: { tenant_id: id } }));
    expect(deleted.data).toMatchObject({ tenant_id: id });
    // an error through the client: typed as `error`, still the contract's Error body
    const gone = await call('getTenant', 404, sdk.getTenant({ client, headers: admin, path: { tenant_id: id } }));
    expect(gone.error).toMatchObject({ error: 'Tenant not found' });
    const imported = await call('importTenant', 201, sdk.importTenant({ client, headers: admin, body: file, bodySerializer: (b: unknown) => b as string }));
    expect(imported.data!.tenant_id).toBe(id);

    // What the run created is deleted, and no tenant of the run is left.
    for (const tenantId of [id, reg.data!.tenant_id]) {
      await call('deleteTenant', 200, sdk.deleteTenant({ client, headers: admin, path: { tenant_id: tenantId } }));
      cleanup.tenants.delete(tenantId);
    }
    cleanup.webhooks.delete(hookId);
    cleanup.permissions.delete(perm);
    cleanup.platformRoles.delete(platformRole);
    const leftover = await call('listTenants', 200, sdk.listTenants({ client, headers: admin, query: { q: run, limit: 10 } }));
    expect(leftover.data!.tenants.map((x) => x.slug)).toEqual([]);

    // every operation of the contract was driven successfully
    // A domain's proof needs a DNS server the suite controls.
    const expected = Object.keys(handlers).filter((op) => !(target.remote && SERVER_WIDE.has(op)) && !(target.dns === null && op === 'verifyDomain'));
    expect([...exercised].sort()).toEqual(expected.sort());
  });
});
