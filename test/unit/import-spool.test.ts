/**
 * The import's upload spool (src/domain/import-spool.ts) on a real directory: the content read
 * back is the bytes received, the file is private while it exists and gone afterwards whatever
 * happens, the size bound holds, and a start removes what a crash left.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { clearSpool, spoolDirectory, withSpooledBody } from '../../src/domain/import-spool';
import { ApiError } from '../../src/errors';

let dataDir: string;
beforeEach(() => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'spool-unit-'));
});
afterEach(() => fs.rmSync(dataDir, { recursive: true, force: true }));

const files = () => (fs.existsSync(spoolDirectory(dataDir)) ? fs.readdirSync(spoolDirectory(dataDir)) : []);
async function* chunks(...parts: Array<Buffer | string>): AsyncGenerator<Buffer | string> {
  for (const p of parts) yield p;
}
async function collect(content: AsyncIterable<Buffer>): Promise<Buffer> {
  const out: Buffer[] = [];
  for await (const c of content) out.push(c);
  return Buffer.concat(out);
}
const complete = () => true;

it('reads back exactly the bytes received; the file is 0600 in a 0700 directory while it exists, gone after', async () => {
  const big = Buffer.alloc(600 * 1024, 0x61);
  const result = await withSpooledBody(dataDir, chunks('{"a":1}\n', big, 'é\n'), { maxBytes: 10_000_000, complete }, async (content, size) => {
    const [name] = files();
    expect(fs.statSync(path.join(spoolDirectory(dataDir), name!)).mode & 0o777).toBe(0o600);
    expect(fs.statSync(spoolDirectory(dataDir)).mode & 0o777).toBe(0o700);
    return { bytes: await collect(content), size };
  });
  expect(result.bytes.equals(Buffer.concat([Buffer.from('{"a":1}\n'), big, Buffer.from('é\n')]))).toBe(true);
  expect(result.size).toBe(result.bytes.length);
  expect(files()).toEqual([]);
});

it('past maxBytes: 413 before the import runs, file removed', async () => {
  const use = jest.fn();
  await expect(withSpooledBody(dataDir, chunks('x'.repeat(60), 'y'.repeat(60)), { maxBytes: 100, complete }, use)).rejects.toMatchObject({ status: 413 });
  expect(use).not.toHaveBeenCalled();
  expect(files()).toEqual([]);
});

it('the import refusing the file: its error stands, file removed', async () => {
  const refused = new ApiError('badRequest', 'Line 1: not valid JSON.');
  await expect(withSpooledBody(dataDir, chunks('nope\n'), { maxBytes: 100, complete }, () => Promise.reject(refused))).rejects.toBe(refused);
  expect(files()).toEqual([]);
});

it('a body that breaks off (the client went away): 400, the import never runs, file removed', async () => {
  async function* broken(): AsyncGenerator<Buffer> {
    yield Buffer.from('{"type":"manifest"}\n');
    throw Object.assign(new Error('aborted'), { code: 'ECONNRESET' });
  }
  const use = jest.fn();
  await expect(withSpooledBody(dataDir, broken(), { maxBytes: 1000, complete: () => false }, use)).rejects.toMatchObject({ status: 400 });
  // Ended early without an error of its own: the same.
  await expect(withSpooledBody(dataDir, chunks('{"type"'), { maxBytes: 1000, complete: () => false }, use)).rejects.toMatchObject({ status: 400 });
  expect(use).not.toHaveBeenCalled();
  expect(files()).toEqual([]);
});

it('a directory it cannot write: 503 naming what to do, not a stack', async () => {
  fs.writeFileSync(spoolDirectory(dataDir), 'a file where the directory should be');
  const err = await withSpooledBody(dataDir, chunks('x'), { maxBytes: 100, complete }, jest.fn()).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(ApiError);
  expect(err).toMatchObject({ status: 503 });
  expect((err as ApiError).detail).toMatch(/SERVICE_DATA_DIR/);
});

it('clearSpool removes the uploads a crash left, and nothing else', async () => {
  expect(await clearSpool(dataDir)).toBe(0);
  fs.mkdirSync(spoolDirectory(dataDir), { mode: 0o700 });
  fs.writeFileSync(path.join(spoolDirectory(dataDir), `import-123-${'0'.repeat(8)}-0000-4000-8000-${'0'.repeat(12)}.ndjson`), 'partial');
  fs.writeFileSync(path.join(spoolDirectory(dataDir), 'operator-notes.txt'), 'kept');
  expect(await clearSpool(dataDir)).toBe(1);
  expect(files()).toEqual(['operator-notes.txt']);
});
