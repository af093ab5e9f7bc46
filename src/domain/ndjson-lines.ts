/**
 * Lines of a newline-delimited body, read as it streams: each line's bytes (without its `\n`)
 * and number, with the whole body and each line bounded, so a body of any size costs at most one
 * line and one chunk of memory.
 */
import { ApiError } from '../errors';

export interface Line {
  /** 1-based. */
  readonly number: number;
  /** The line's bytes without its newline. */
  readonly bytes: Buffer;
  /** Whether a newline ended it (false only for the last line of a body that lacks one). */
  readonly terminated: boolean;
}

export interface LineLimits {
  /** The whole body (413 beyond). */
  readonly maxBytes: number;
  /** One line (400 beyond). */
  readonly maxLineBytes: number;
}

/** Yields the lines of `body`; throws 413 past `maxBytes` and 400 for a line past `maxLineBytes`. */
export async function* readLines(body: AsyncIterable<Buffer | string>, limits: LineLimits): AsyncGenerator<Line> {
  let total = 0;
  let number = 0;
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  for await (const piece of body) {
    const chunk = typeof piece === 'string' ? Buffer.from(piece, 'utf8') : piece;
    total += chunk.length;
    if (total > limits.maxBytes) throw new ApiError('payloadTooLarge', `The import is larger than ${limits.maxBytes} bytes (SERVICE_IMPORT_MAX_BYTES).`);
    let start = 0;
    for (;;) {
      const nl = chunk.indexOf(0x0a, start);
      if (nl === -1) break;
      const part = chunk.subarray(start, nl);
      const bytes = pending.length === 0 ? part : Buffer.concat([...pending, part]);
      pending = [];
      pendingBytes = 0;
      number++;
      if (bytes.length > limits.maxLineBytes) throw new ApiError('badRequest', `Line ${number} is longer than ${limits.maxLineBytes} bytes.`);
      yield { number, bytes, terminated: true };
      start = nl + 1;
    }
    if (start < chunk.length) {
      const rest = chunk.subarray(start);
      pendingBytes += rest.length;
      if (pendingBytes > limits.maxLineBytes) throw new ApiError('badRequest', `Line ${number + 1} is longer than ${limits.maxLineBytes} bytes.`);
      // A copy: the stream may reuse the chunk's memory.
      pending.push(Buffer.from(rest));
    }
  }
  if (pendingBytes > 0) yield { number: number + 1, bytes: Buffer.concat(pending), terminated: false };
}
