/**
 * The import's upload, received into a private temporary file before a row is written
 * (docs/operations.md#moving-a-tenant-between-deployments): the body arrives at disk speed, well
 * within the request timeout however long the import then takes, and a slow sender is still cut
 * off by that timeout. The file is `<SERVICE_DATA_DIR>/import-spool/import-<pid>-<uuid>.ndjson`,
 * created exclusively (never through an existing name or link) with mode 0600 in a 0700
 * directory, bounded by SERVICE_IMPORT_MAX_BYTES, read back through the same open handle, and
 * removed whatever happens: success, a refused file, a client that goes away; after a crash, the
 * next start empties the directory (a file another running instance still holds open is not
 * lost: it reads through its handle).
 */
import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { ApiError } from '../errors';

export const SPOOL_DIR_NAME = 'import-spool';
const FILE_NAME = /^import-\d+-[0-9a-f-]{36}\.ndjson$/;
/** Bytes read back per chunk. */
const READ_CHUNK = 256 * 1024;

export function spoolDirectory(dataDir: string): string {
  return path.join(dataDir, SPOOL_DIR_NAME);
}

/** At start: removes what a crashed instance left behind. Returns how many files it removed. */
export async function clearSpool(dataDir: string): Promise<number> {
  let names: string[];
  try {
    names = await fs.readdir(spoolDirectory(dataDir));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return 0;
    throw err;
  }
  let removed = 0;
  for (const name of names) {
    if (!FILE_NAME.test(name)) continue;
    await fs.rm(path.join(spoolDirectory(dataDir), name), { force: true });
    removed++;
  }
  return removed;
}

/** A disk fault is the deployment's, not the client's: 503 with what to do, never a stack. */
function diskFault(err: unknown): ApiError {
  const code = (err as NodeJS.ErrnoException).code ?? 'unknown error';
  return new ApiError('unavailable', `The import could not be received into ${SPOOL_DIR_NAME} under SERVICE_DATA_DIR (${code}): free disk space there or make it writable.`);
}

/**
 * Receives `body` (at most `maxBytes`, 413 beyond) into a private file of `dataDir`, then calls
 * `use` with the file's content; the file is removed when `use` settles or the receipt fails.
 * `complete()` tells whether the client sent its whole body (false: it went away mid-upload).
 */
export async function withSpooledBody<T>(
  dataDir: string,
  body: AsyncIterable<Buffer | string>,
  opts: { maxBytes: number; complete: () => boolean },
  use: (content: AsyncIterable<Buffer>, size: number) => Promise<T>,
): Promise<T> {
  const dir = spoolDirectory(dataDir);
  const file = path.join(dir, `import-${process.pid}-${crypto.randomUUID()}.ndjson`);
  let handle: fs.FileHandle;
  try {
    await fs.mkdir(dir, { recursive: true, mode: 0o700 });
    await fs.chmod(dir, 0o700); // a directory made before, by hand, with wider rights
    // 'wx+': created here or refused (O_EXCL: never an existing file or a planted link), read and written through one handle.
    handle = await fs.open(file, 'wx+', 0o600);
  } catch (err) {
    throw diskFault(err);
  }
  try {
    let size = 0;
    try {
      for await (const piece of body) {
        const chunk = typeof piece === 'string' ? Buffer.from(piece, 'utf8') : piece;
        size += chunk.length;
        if (size > opts.maxBytes) throw new ApiError('payloadTooLarge', `The import is larger than ${opts.maxBytes} bytes (SERVICE_IMPORT_MAX_BYTES).`);
        try {
          await handle.write(chunk, 0, chunk.length, null);
        } catch (err) {
          throw diskFault(err);
        }
      }
    } catch (err) {
      // The stream's own error ('aborted') when the client went away or was cut off: its fault, not a 500.
      if (err instanceof ApiError || opts.complete()) throw err;
    }
    // A body that ended without all its bytes: the client went away (nobody is left to answer).
    if (!opts.complete()) throw new ApiError('badRequest', 'The upload ended before its last byte: the client went away or was too slow (SERVICE_REQUEST_TIMEOUT_MS).');
    return await use(readBack(handle, size), size);
  } finally {
    await handle.close().catch(() => undefined);
    // Should removal itself fail, the answer stands; the next start removes the file.
    await fs.rm(file, { force: true }).catch(() => undefined);
  }
}

async function* readBack(handle: fs.FileHandle, size: number): AsyncGenerator<Buffer> {
  let position = 0;
  while (position < size) {
    // A fresh buffer per chunk: a line handed on may still point into the previous one.
    const buf = Buffer.allocUnsafe(Math.min(READ_CHUNK, size - position));
    const { bytesRead } = await handle.read(buf, 0, buf.length, position);
    if (bytesRead === 0) break;
    position += bytesRead;
    yield buf.subarray(0, bytesRead);
  }
}
