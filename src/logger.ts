/**
 * Structured logs with pino: a fixed message plus fields. Tokens and secrets are never logged;
 * the redaction list is a second line of defence.
 */
import pino, { type DestinationStream, type Logger } from 'pino';
import type { LogLevel } from './config';

/** Creates the root logger (JSON lines on stdout unless another destination is given). */
export function createLogger(level: LogLevel, destination?: DestinationStream): Logger {
  return pino(
    {
      name: 'tenant-service',
      level,
      base: { service: 'tenant-service' },
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: {
        paths: ['headers.authorization', 'req.headers.authorization', 'authorization', 'token', 'password', '*.password', 'secret'],
        censor: '[redacted]',
      },
      serializers: { err: pino.stdSerializers.err },
    },
    destination,
  );
}
