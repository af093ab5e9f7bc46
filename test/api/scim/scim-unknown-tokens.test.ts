/**
 * An unknown SCIM token costs no more than an unknown JWT (docs/directory-sync.md#connecting-a-directory):
 * an address's lookups of tokens not remembered are counted before they run, and once it has
 * sent a few unknown tokens, the next are refused without a database transaction, while a token
 * already remembered is still served. Counted by the statements the app sends to the database.
 */
import { randomBytes } from 'node:crypto';
import request from 'supertest';
import { UNKNOWN_LOOKUPS } from '../../../src/http/scim-token';
import { startTestApp, type TestApp } from '../../helpers/app';
import { adminToken, closeOwnerConnection, createUser, tokenFor, unique } from '../../helpers/factories';

let t: TestApp;
/** Statements sent that read the SCIM tokens' table. */
let lookups = 0;

beforeAll(async () => {
  t = await startTestApp({ SERVICE_MULTI_TENANT_MODE: 'true', SERVICE_TRUST_PROXY: 'loopback' });
  t.db.on('query', (q: { sql?: string }) => {
    if (q.sql?.includes('scim_tokens')) lookups++;
  });
}, 60_000);
afterAll(async () => {
  await t?.close();
  await closeOwnerConnection();
});

async function directory(): Promise<string> {
  const slug = unique('unk');
  const r = await request(t.app).post('/api/setup/tenant').set('Authorization', `Bearer ${adminToken()}`).send({ name: slug, slug }).expect(201);
  const a = await createUser(r.body.tenant_id as string, { role: 'admin' });
  const admin = `Bearer ${tokenFor({ sub: a.subject, claims: { tenant: slug } })}`;
  const made = await request(t.app).post('/api/tenant/scim/tokens').set('Authorization', admin).send({}).expect(201);
  return `Bearer ${made.body.token}`;
}

const madeUp = () => `Bearer scim_${randomBytes(32).toString('base64url')}`;
const users = (auth: string, ip: string) => request(t.app).get('/scim/v2/Users').set('Authorization', auth).set('X-Forwarded-For', ip);

it('refuses made-up tokens from an address without a database lookup once it has sent a few, and keeps serving a remembered token', async () => {
  const valid = await directory();
  await users(valid, '203.0.113.7').expect(200); // remembered from now on

  const before = lookups;
  const flood = await Promise.all(Array.from({ length: 40 }, () => users(madeUp(), '203.0.113.7')));
  for (const r of flood) expect(r.status).toBe(401);
  // Counted before the lookup: 40 at once still make only the address's few lookups.
  expect(lookups - before).toBe(UNKNOWN_LOOKUPS);
  expect(flood.filter((r) => /not looked up/.test(r.body.detail as string))).toHaveLength(40 - UNKNOWN_LOOKUPS);

  // The remembered token is still served from that address; another address still gets its lookups.
  await users(valid, '203.0.113.7').expect(200);
  const other = lookups;
  await users(madeUp(), '198.51.100.9').expect(401);
  expect(lookups - other).toBe(1);
});

it("serves a directory's burst with a token not remembered yet: requests at once share one lookup", async () => {
  const valid = await directory();
  const burst = await Promise.all(Array.from({ length: 40 }, () => users(valid, '192.0.2.44')));
  expect(burst.map((r) => r.status)).toEqual(Array.from({ length: 40 }, () => 200));
});
