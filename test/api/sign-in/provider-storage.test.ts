/**
 * The provider's storage in PostgreSQL (docs/sign-in.md#the-provider): what the protocol library
 * stores is found by id, uid and grant; a used code stays used; an expired row is never read and
 * is purged; a grant's revocation reaches every token of it. Driven through the adapter the
 * library itself calls.
 */
import crypto from 'node:crypto';
import { pgAdapter } from '../../../src/oidc/adapter';
import { ownerConnection } from '../../helpers/factories';
import { useProviderApp } from './provider-harness';

const p = useProviderApp();
let Adapter: ReturnType<typeof pgAdapter>;

beforeAll(() => {
  Adapter = pgAdapter(p.db, p.config);
});

const id = () => crypto.randomBytes(16).toString('base64url');

it('finds by id and uid, marks a consumed payload, destroys', async () => {
  const sessions = new Adapter('Session');
  const sid = id();
  const uid = id();
  await sessions.upsert(sid, { uid, accountId: 'a', exp: 1 }, 60);
  expect(await sessions.find(sid)).toEqual({ uid, accountId: 'a', exp: 1 });
  expect(await sessions.findByUid(uid)).toEqual({ uid, accountId: 'a', exp: 1 });
  expect(await new Adapter('Interaction').find(sid)).toBeUndefined();

  const codes = new Adapter('AuthorizationCode');
  const code = id();
  await codes.upsert(code, { grantId: 'g', scope: 'openid' }, 60);
  await codes.consume(code);
  expect(await codes.find(code)).toEqual({ grantId: 'g', scope: 'openid', consumed: true });
  await codes.destroy(code);
  expect(await codes.find(code)).toBeUndefined();
});

it('revokes every token of a grant, of the model asked only', async () => {
  const grantId = id();
  const access = new Adapter('AccessToken');
  const refresh = new Adapter('RefreshToken');
  const [a1, a2, r1] = [id(), id(), id()];
  await access.upsert(a1, { grantId }, 60);
  await access.upsert(a2, { grantId }, 60);
  await refresh.upsert(r1, { grantId }, 60);
  await access.revokeByGrantId(grantId);
  expect(await access.find(a1)).toBeUndefined();
  expect(await access.find(a2)).toBeUndefined();
  expect(await refresh.find(r1)).toEqual({ grantId });
});

it('never reads an expired row, and purges expired rows as it writes', async () => {
  const interactions = new Adapter('Interaction');
  const old = id();
  await interactions.upsert(old, { uid: old }, 60);
  await ownerConnection()('oidc_payloads').where({ model: 'Interaction', id: old }).update({ expires_at: ownerConnection().raw("now() - interval '1 second'") });
  expect(await interactions.find(old)).toBeUndefined();
  expect(await interactions.findByUid(old)).toBeUndefined();
  // Every 16th write deletes expired rows.
  for (let i = 0; i < 16; i++) await interactions.upsert(id(), { n: i }, 60);
  expect(await ownerConnection()('oidc_payloads').where({ model: 'Interaction', id: old }).first()).toBeUndefined();
});

it('reads clients from oidc_clients and never writes them', async () => {
  const clients = new Adapter('Client');
  expect(await clients.find('no-such-client')).toBeUndefined();
  await expect(clients.upsert('x', { client_id: 'x' }, undefined)).rejects.toThrow(/registered/);
});
