/**
 * Console sign-in codes (POST /api/console/codes, POST /api/console/sessions): a code is
 * exchanged once for the very token that made it; a used, expired or unknown code gets one and
 * the same 400; of two exchanges at once exactly one succeeds; the database never holds a usable
 * token; the exchange is counted per client address whatever token it carries.
 */
import crypto from 'node:crypto';
import request from 'supertest';
import { purgeExpired } from '../../../src/db/queries/retention';
import { withService } from '../../../src/db/tenant-scope';
import { startTestApp, type TestApp } from '../../helpers/app';
import { adminToken, closeOwnerConnection, ownerConnection, tokenFor, unique } from '../../helpers/factories';

jest.setTimeout(60_000);

let t: TestApp;
let limited: TestApp;

beforeAll(async () => {
  t = await startTestApp();
  limited = await startTestApp({ SERVICE_RATE_LIMIT_ENABLED: 'true' });
});

afterAll(async () => {
  await t?.close();
  await limited?.close();
  await closeOwnerConnection();
});

async function makeCode(token: string, body?: Record<string, unknown>): Promise<{ code: string; expires_in: number; expires_at: string }> {
  const r = request(t.app).post('/api/console/codes').set('Authorization', `Bearer ${token}`);
  const res = body ? await r.send(body) : await r;
  expect(res.status).toBe(201);
  return res.body as { code: string; expires_in: number; expires_at: string };
}

function exchange(code: string, app = t.app): request.Test {
  return request(app).post('/api/console/sessions').send({ code });
}

/** The 400 of a used, expired or unknown code, without its request id. */
function refusal(res: request.Response): unknown {
  expect(res.status).toBe(400);
  const { request_id: _id, ...rest } = res.body as Record<string, unknown>;
  return rest;
}

async function codeRows(subject: string): Promise<Array<Record<string, unknown>>> {
  return ownerConnection()('console_sign_in_codes').where({ subject }).select('*');
}

describe('POST /api/console/codes and /api/console/sessions', () => {
  it('a code is exchanged once for the token that made it; the second exchange gets the same answer as a code never issued', async () => {
    const sub = unique('signin');
    const token = tokenFor({ sub, email: `${sub}@example.test`, ttlSeconds: 900 });
    const made = await makeCode(token);
    expect(made.code).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(made.expires_in).toBe(300);
    const first = await exchange(made.code);
    expect(first.status).toBe(200);
    expect(first.body).toEqual({ access_token: token, token_type: 'Bearer', expires_in: expect.any(Number) });
    expect(first.body.expires_in).toBeGreaterThan(850);
    expect(first.body.expires_in).toBeLessThanOrEqual(900);
    // The token works; the code does not, twice over, and says nothing a random code does not.
    await request(t.app).get('/api/tenants/mine').set('Authorization', `Bearer ${first.body.access_token as string}`).expect(200);
    const again = refusal(await exchange(made.code));
    const never = refusal(await exchange(crypto.randomBytes(32).toString('base64url')));
    expect(again).toEqual(never);
    expect(again).toEqual({ error: 'Sign-in code not accepted', detail: expect.stringContaining('Print a new one with tenantctl console') });
    expect(await codeRows(sub)).toEqual([]);
  });

  it('two exchanges of one code at once: exactly one gets the token', async () => {
    const token = tokenFor({ sub: unique('race'), ttlSeconds: 900 });
    for (let round = 0; round < 5; round++) {
      const { code } = await makeCode(token);
      const answers = await Promise.all([exchange(code), exchange(code), exchange(code)]);
      expect(answers.map((a) => a.status).sort()).toEqual([200, 400, 400]);
      expect(answers.find((a) => a.status === 200)!.body.access_token).toBe(token);
    }
  });

  it('the database holds the code hashed and the token sealed: neither appears in the row', async () => {
    const sub = unique('sealed');
    const token = tokenFor({ sub, admin: true, ttlSeconds: 900 });
    const { code } = await makeCode(token);
    const rows = await codeRows(sub);
    expect(rows).toHaveLength(1);
    const dump = JSON.stringify(rows[0], (_k, v: unknown) => (Buffer.isBuffer(v) ? v.toString('base64url') : v));
    expect(dump).not.toContain(code);
    expect(dump).not.toContain(token);
    expect(dump).not.toContain(token.split('.')[1]!);
    expect(dump).not.toContain(crypto.createHash('sha256').update(code).digest('base64url'));
    expect(rows[0]).toMatchObject({ subject: sub, platform_admin: true });
    // The exchange removes the row: nothing of the code is left.
    await exchange(code).expect(200);
    expect(await codeRows(sub)).toEqual([]);
  });

  it('an expired code gets the same answer, and is removed; creating a code removes expired ones', async () => {
    const sub = unique('late');
    const token = tokenFor({ sub, ttlSeconds: 900 });
    const made = await makeCode(token, { expires_in: 1 });
    expect(made.expires_in).toBe(1);
    // Wait by the database's clock, which decides expiry.
    await withService(t.db, async (trx) => trx.raw('select pg_sleep(greatest(0, extract(epoch from (?::timestamptz - now())) + 0.05))', [made.expires_at]));
    const late = refusal(await exchange(made.code));
    expect(late).toEqual(refusal(await exchange(crypto.randomBytes(32).toString('base64url'))));
    expect(await codeRows(sub)).toEqual([]);

    const stale = await makeCode(token, { expires_in: 1 });
    await withService(t.db, async (trx) => trx.raw('select pg_sleep(greatest(0, extract(epoch from (?::timestamptz - now())) + 0.05))', [stale.expires_at]));
    expect(await codeRows(sub)).toHaveLength(1);
    await makeCode(tokenFor({ sub: unique('other') }));
    expect(await codeRows(sub)).toEqual([]);
  });

  it('the retention purge deletes codes that expired unused', async () => {
    const sub = unique('unused');
    const made = await makeCode(tokenFor({ sub, ttlSeconds: 900 }), { expires_in: 1 });
    const live = unique('live');
    await makeCode(tokenFor({ sub: live, ttlSeconds: 900 }));
    await withService(t.db, async (trx) => trx.raw('select pg_sleep(greatest(0, extract(epoch from (?::timestamptz - now())) + 0.05))', [made.expires_at]));
    expect(await codeRows(sub)).toHaveLength(1);
    const result = await purgeExpired(ownerConnection(), { retentionDays: 365 });
    expect(result).toMatchObject({ ran: true, signInCodes: expect.any(Number) });
    expect(await codeRows(sub)).toEqual([]);
    expect(await codeRows(live)).toHaveLength(1);
  });

  it('a code never outlives its token', async () => {
    const made = await makeCode(tokenFor({ sub: unique('short'), ttlSeconds: 20 }), { expires_in: 900 });
    expect(made.expires_in).toBeLessThanOrEqual(20);
    expect(made.expires_in).toBeGreaterThanOrEqual(1);
  });

  it('records sign_in_link.created and sign_in_link.redeemed, naming who the link signs in', async () => {
    const sub = unique('audited');
    const { code } = await makeCode(tokenFor({ sub, admin: true, ttlSeconds: 900 }));
    await exchange(code).expect(200);
    const admin = adminToken();
    for (const action of ['sign_in_link.created', 'sign_in_link.redeemed']) {
      const res = await request(t.app).get('/api/setup/events').query({ action, limit: 100 }).set('Authorization', `Bearer ${admin}`).expect(200);
      const event = (res.body.events as Array<Record<string, unknown>>).find((e) => (e.data as { subject?: string }).subject === sub);
      expect(event).toMatchObject({ action, tenant_id: null, target: { type: 'sign_in_link' }, data: { subject: sub, platform_admin: true } });
      expect(JSON.stringify(event)).not.toContain(code);
    }
  });

  it.each([
    ['no body', undefined],
    ['a short code', { code: 'abc' }],
    ['a code with other characters', { code: `${'a'.repeat(42)}=` }],
    ['another field', { code: crypto.randomBytes(32).toString('base64url'), sub: 'x' }],
  ])('%s is a 400 Validation error', async (_name, body) => {
    const res = await request(t.app).post('/api/console/sessions').send(body as object);
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('Validation error');
  });

  it('making a code needs a valid token, and a lifetime within 1..900 seconds', async () => {
    await request(t.app).post('/api/console/codes').expect(401);
    await request(t.app).post('/api/console/codes').set('Authorization', 'Bearer not.a.token').expect(401);
    for (const expires_in of [0, 901, 'soon']) {
      const res = await request(t.app).post('/api/console/codes').set('Authorization', `Bearer ${tokenFor()}`).send({ expires_in });
      expect(res.status).toBe(400);
      expect(res.body.error).toBe('Validation error');
    }
  });

  it('the exchange is counted per client address, whatever bearer token comes with it', async () => {
    const codes = () => crypto.randomBytes(32).toString('base64url');
    const statuses: number[] = [];
    for (let i = 0; i < 11; i++) {
      const res = await request(limited.app).post('/api/console/sessions').set('Authorization', `Bearer ${tokenFor({ sub: unique('guesser') })}`).send({ code: codes() });
      statuses.push(res.status);
      if (i === 0) expect(res.headers['ratelimit-policy']).toContain('console-session');
    }
    expect(statuses.slice(0, 10)).toEqual(Array(10).fill(400));
    expect(statuses[10]).toBe(429);
  });
});
