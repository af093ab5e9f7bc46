/**
 * src/logger.ts: secrets never reach a log line, whether logged as a field (`token`,
 * `password`, `secret`, `authorization`), inside request headers, or one level down
 * (`smtp.password`); the logged objects themselves are left unchanged.
 */
import { createLogger, redactNestedPasswords } from '../../src/logger';

function capture(): { lines: Array<Record<string, unknown>>; raw: string[]; stream: { write(s: string): void } } {
  const raw: string[] = [];
  return {
    raw,
    get lines() {
      return raw.map((l) => JSON.parse(l) as Record<string, unknown>);
    },
    stream: { write: (s: string) => void raw.push(s) },
  };
}

it('redacts secret fields at the top level and in request headers', () => {
  const out = capture();
  const log = createLogger('info', out.stream);
  log.info({ token: 'tok-1', password: 'pw-1', secret: 'sec-1', authorization: 'Bearer abc', headers: { authorization: 'Bearer def', accept: 'x' } }, 'm');
  expect(out.lines[0]).toMatchObject({ token: '[redacted]', password: '[redacted]', secret: '[redacted]', authorization: '[redacted]', headers: { authorization: '[redacted]', accept: 'x' } });
  for (const s of ['tok-1', 'pw-1', 'sec-1', 'abc', 'def']) expect(out.raw[0]).not.toContain(s);
});

it('redacts a password one level down and leaves the logged object as it was', () => {
  const out = capture();
  const log = createLogger('info', out.stream);
  const smtp = { host: 'mail.example', password: 'pw-2' };
  log.info({ smtp, other: { password: 'pw-3' }, list: [1, 2], n: 1 }, 'm');
  expect(out.lines[0]).toMatchObject({ smtp: { host: 'mail.example', password: '[redacted]' }, other: { password: '[redacted]' }, list: [1, 2], n: 1 });
  expect(out.raw[0]).not.toMatch(/pw-2|pw-3/);
  expect(smtp.password).toBe('pw-2');
});

it('returns flat fields untouched (no copy on the hot path)', () => {
  const fields = { request_id: 'r', status: 200, path: '/api/tenant', error: undefined };
  expect(redactNestedPasswords(fields)).toBe(fields);
});
