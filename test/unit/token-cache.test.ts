/**
 * src/auth/token-cache.ts: a verified token is remembered exactly while it is valid (exp plus
 * the tolerance, in whole seconds as jsonwebtoken counts them) and only under the key set it was
 * verified with; bounded by entries, oldest first; size 0 keeps nothing.
 */
import type { Caller } from '../../src/context/claims';
import { VerifiedTokenCache } from '../../src/auth/token-cache';

const caller = (subject: string): Caller => ({ issuer: 'iss', subject, email: null, emailVerified: null, name: null, isPlatformAdmin: false, claims: { sub: subject } });

it('answers a remembered token until exp + tolerance, then forgets it', () => {
  let now = 1_000_000_000; // ms
  const cache = new VerifiedTokenCache(10, 30, () => now);
  const exp = now / 1000 + 60;
  cache.set('t1', caller('a'), exp, 0);
  expect(cache.get('t1', 0)?.subject).toBe('a');
  now = (exp + 29) * 1000 + 999; // second exp+29: still valid (jsonwebtoken: valid while now < exp + 30)
  expect(cache.get('t1', 0)?.subject).toBe('a');
  now = (exp + 30) * 1000; // second exp+30: expired
  expect(cache.get('t1', 0)).toBeNull();
  expect(cache.size).toBe(0);
});

it('forgets a token verified under another key-set generation', () => {
  const cache = new VerifiedTokenCache(10, 30);
  cache.set('t1', caller('a'), Date.now() / 1000 + 600, 3);
  expect(cache.get('t1', 3)?.subject).toBe('a');
  expect(cache.get('t1', 4)).toBeNull();
  // Gone for good, even under the old generation.
  expect(cache.get('t1', 3)).toBeNull();
});

it('matches the exact token text only', () => {
  const cache = new VerifiedTokenCache(10, 30);
  cache.set('aaa.bbb.ccc', caller('a'), Date.now() / 1000 + 600, 0);
  expect(cache.get('aaa.bbb.ccd', 0)).toBeNull();
  expect(cache.get('aaa.bbb.cc', 0)).toBeNull();
  expect(cache.get('AAA.bbb.ccc', 0)).toBeNull();
});

it('keeps at most maxEntries, dropping the oldest', () => {
  const cache = new VerifiedTokenCache(3, 30);
  const exp = Date.now() / 1000 + 600;
  for (const t of ['t1', 't2', 't3', 't4']) cache.set(t, caller(t), exp, 0);
  expect(cache.size).toBe(3);
  expect(cache.get('t1', 0)).toBeNull();
  expect(cache.get('t4', 0)?.subject).toBe('t4');
});

it('keeps nothing with size 0', () => {
  const cache = new VerifiedTokenCache(0, 30);
  cache.set('t1', caller('a'), Date.now() / 1000 + 600, 0);
  expect(cache.get('t1', 0)).toBeNull();
  expect(cache.size).toBe(0);
});
