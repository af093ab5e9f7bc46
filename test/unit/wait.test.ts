/**
 * test/helpers/wait.ts: what another process writes after it has answered (nginx's access log
 * line) is waited for, bounded, never read at once or after a fixed sleep.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { waitFor, waitForFileContaining } from '../helpers/wait';

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tenant-service-wait-'));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

it('returns the file once the line arrives, however late the writer is', async () => {
  const file = path.join(dir, 'access.log');
  fs.writeFileSync(file, 'GET /first\n');
  // The writer appends only after the reader started waiting (a missing line is "not yet").
  const writer = new Promise<void>((resolve) => setImmediate(() => {
    setTimeout(() => {
      fs.appendFileSync(file, 'GET /whoami?from=prefix-test\n');
      resolve();
    }, 120);
  }));
  const text = await waitForFileContaining(file, '/whoami?from=prefix-test', { everyMs: 10 });
  await writer;
  expect(text).toContain('/whoami?from=prefix-test');
});

it('treats a file that does not exist yet as "not yet"', async () => {
  const file = path.join(dir, 'later.log');
  setTimeout(() => fs.writeFileSync(file, 'ready\n'), 50);
  await expect(waitForFileContaining(file, 'ready', { everyMs: 10 })).resolves.toBe('ready\n');
});

it('fails when the bound passes, naming what it waited for and what it last saw', async () => {
  await expect(waitFor('the answer', () => false, { boundMs: 30, everyMs: 5 })).rejects.toThrow(/still waiting, after 30 ms, for the answer \(last: false\)/);
  await expect(waitFor('a file', () => { throw new Error('ENOENT'); }, { boundMs: 30, everyMs: 5 })).rejects.toThrow(/for a file \(last: ENOENT\)/);
});

it('returns what the probe found', async () => {
  let calls = 0;
  await expect(waitFor('the third call', () => (++calls >= 3 ? calls : undefined), { everyMs: 1 })).resolves.toBe(3);
});
