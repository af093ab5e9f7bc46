/**
 * Structured logs with pino: a fixed message plus fields. Tokens and secrets are never logged;
 * the redaction list is a second line of defence.
 */
import pino, { type DestinationStream, type Logger } from 'pino';
import type { LogLevel } from './config';

/**
 * Standard output, written asynchronously (sonic-boom): a request does not wait for its log
 * lines. Lines are written 4 KiB at a time, and at least every 100 ms when fewer are waiting:
 * one write per access line was a sixteenth of a decision's CPU under load. `flushLogger`
 * (shutdown) and pino's own exit hook write what is still buffered (docs/operations.md#metrics-and-logs).
 */
function stdoutDestination(): DestinationStream {
  return pino.destination({ dest: 1, sync: false, minLength: 4096, periodicFlush: 100 });
}

const CENSOR = '[redacted]';

/** A line's fields with any `<field>.password` replaced by the censor (the input is not changed). */
export function redactNestedPasswords(fields: Record<string, unknown>): Record<string, unknown> {
  let out: Record<string, unknown> | null = null;
  for (const key in fields) {
    const value = fields[key];
    if (value !== null && typeof value === 'object' && !(value instanceof Error) && Object.prototype.hasOwnProperty.call(value, 'password')) {
      out ??= { ...fields };
      out[key] = Array.isArray(value) ? Object.assign([...value], { password: CENSOR }) : { ...(value as object), password: CENSOR };
    }
  }
  return out ?? fields;
}

/** Creates the root logger (JSON lines on stdout unless another destination is given). */
export function createLogger(level: LogLevel, destination: DestinationStream = stdoutDestination()): Logger {
  return pino(
    {
      name: 'tenant-service',
      level,
      base: { service: 'tenant-service' },
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: {
        paths: ['headers.authorization', 'req.headers.authorization', 'authorization', 'token', 'password', 'secret'],
        censor: '[redacted]',
      },
      // `password` one level down (what the path `*.password` would redact): pino's wildcard
      // redaction costs ~3 µs on every line, this check a few comparisons on flat lines.
      formatters: { log: redactNestedPasswords },
      serializers: { err: pino.stdSerializers.err },
    },
    destination,
  );
}

/** Writes out every buffered line; resolves when done (or at once for a synchronous destination). */
export function flushLogger(logger: Logger): Promise<void> {
  return new Promise((resolve) => {
    try {
      logger.flush((err?: Error) => {
        void err;
        resolve();
      });
    } catch {
      resolve();
    }
  });
}
