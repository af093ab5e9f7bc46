/**
 * `tenantctl tenant suspend|reactivate|schedule-deletion|cancel-deletion|export|import`: a
 * tenant's lifecycle on the generated client (platform admin); see
 * docs/operations.md#tenant-lifecycle. Export writes the file to --output or stdout and import reads a file or stdin,
 * both streamed (a tenant of any size costs the CLI a buffer, not the file); progress goes to
 * stderr only when it is a terminal.
 */
import fs from 'node:fs';
import { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Command } from 'commander';
import * as sdk from '../../generated/sdk.gen';
import type { Tenant } from '../../generated/types.gen';
import { call, connect, REQUEST_TIMEOUT_MS } from './api';
import type { CommandHelpers, Format } from './command';
import { CliError } from './errors';
import { renderPairs } from './output';
import { streamingFetch } from './upload';
import { resolveTenantId, tenantPairs } from './tenant-lookup';

/** The process's standard streams as streams (export and import stream through them). */
export interface StandardStreams {
  readonly stdin: NodeJS.ReadableStream;
  readonly stdout: NodeJS.WritableStream;
}

/** Exports and imports may take long: no overall timeout, only one for the answer to start. */
const TRANSFER_TIMEOUT_MS = 24 * 3_600_000;

/** A byte counter between a source and its destination, reporting every `step` bytes. */
function counting(report: (bytes: number) => void, step = 8 * 1024 * 1024) {
  let bytes = 0;
  let next = step;
  return {
    count(n: number) {
      bytes += n;
      if (bytes >= next) {
        report(bytes);
        next = bytes + step;
      }
    },
    get bytes() {
      return bytes;
    },
  };
}

const mib = (n: number) => `${(n / 1024 / 1024).toFixed(1)} MiB`;

export function registerTenantLifecycleCommands(program: Command, h: CommandHelpers, streams: StandardStreams): void {
  const { globals, styles, formatOption, print, progress } = h;
  const tenant = program.commands.find((c) => c.name() === 'tenant');
  if (!tenant) throw new Error('the tenant command group must be registered first');

  const show = (t: Tenant, format: Format, cmd: Command) => {
    if (format === 'json') return print(`${JSON.stringify(t, null, 2)}\n`);
    const pairs = tenantPairs(t);
    if (t.suspended_at) pairs.push(['suspended_at', t.suspended_at], ['suspension_reason', t.suspension_reason ?? '']);
    if (t.delete_after) pairs.push(['delete_after', t.delete_after]);
    print(renderPairs(pairs, styles(cmd).out));
  };

  /** One lifecycle command: resolve the tenant, make one call, show the tenant it answers. */
  const change = (name: string, description: string, configure: (c: Command) => Command, run: (conn: ReturnType<typeof connect>, id: string, opts: Record<string, unknown>) => Promise<Tenant>) =>
    configure(tenant.command(name).description(description).argument('<tenant>', 'slug or tenant id'))
      .addOption(formatOption())
      .action(async (ref: string, opts: Record<string, unknown> & { format: Format }, cmd: Command) => {
        const conn = connect(globals(cmd));
        const id = await resolveTenantId(conn, ref);
        show(await run(conn, id, opts), opts.format, cmd);
      });

  const signal = () => AbortSignal.timeout(REQUEST_TIMEOUT_MS);

  change(
    'suspend',
    'suspend a tenant: every request to it is refused with 403 Tenant suspended until it is reactivated; its data is kept',
    (c) => c.requiredOption('--reason <text>', 'why (1-500 characters; platform admins only ever see it)'),
    (conn, id, o) => call(conn, 'tenant suspend', sdk.suspendTenant({ client: conn.client, path: { tenant_id: id }, body: { reason: String(o.reason) }, signal: signal() })),
  );
  change(
    'reactivate',
    'reactivate a suspended tenant',
    (c) => c,
    (conn, id) => call(conn, 'tenant reactivate', sdk.reactivateTenant({ client: conn.client, path: { tenant_id: id }, signal: signal() })),
  );
  change(
    'schedule-deletion',
    'schedule the deletion of a tenant after a grace period (refused like a suspended tenant meanwhile)',
    (c) => c.option('--grace-days <days>', 'days until the deletion, 1-90', '30'),
    (conn, id, o) => {
      const days = Number(o.graceDays);
      if (!Number.isInteger(days) || days < 1 || days > 90) throw new CliError(`--grace-days must be a whole number from 1 to 90, got '${String(o.graceDays)}'`);
      return call(conn, 'tenant schedule-deletion', sdk.scheduleTenantDeletion({ client: conn.client, path: { tenant_id: id }, body: { grace_days: days }, signal: signal() }));
    },
  );
  change(
    'cancel-deletion',
    'cancel a scheduled deletion: the tenant gets back the status it had',
    (c) => c,
    (conn, id) => call(conn, 'tenant cancel-deletion', sdk.cancelTenantDeletion({ client: conn.client, path: { tenant_id: id }, signal: signal() })),
  );

  tenant
    .command('export')
    .description('export every row of a tenant as newline-delimited JSON (to move it to another deployment)')
    .argument('<tenant>', 'slug or tenant id')
    .option('-o, --output <file>', 'write to this file (default: stdout)')
    .action(async (ref: string, opts: { output?: string }, cmd: Command) => {
      const conn = connect(globals(cmd));
      const id = await resolveTenantId(conn, ref);
      const r = await call(
        conn,
        'tenant export',
        sdk.exportTenant({ client: conn.client, path: { tenant_id: id }, parseAs: 'stream', signal: AbortSignal.timeout(TRANSFER_TIMEOUT_MS) }) as unknown as Promise<{ data?: ReadableStream<Uint8Array>; error?: unknown; response?: Response }>,
      );
      const meter = counting((n) => progress(`exported ${mib(n)}`));
      const source = Readable.fromWeb(r as unknown as import('node:stream/web').ReadableStream<Uint8Array>);
      source.on('data', (c: Buffer) => meter.count(c.length));
      // A file is written whole or not at all under its name: a cut-short export never looks complete.
      const target = opts.output ? `${opts.output}.partial` : null;
      const out = target ? fs.createWriteStream(target, { flags: 'wx' }) : (streams.stdout as Writable);
      try {
        await pipeline(source, out, { end: target !== null });
      } catch (err) {
        if (target) fs.rmSync(target, { force: true });
        throw new CliError(`tenant export failed after ${mib(meter.bytes)}: ${(err as Error).message}`);
      }
      if (target) fs.renameSync(target, opts.output!);
      progress(`exported ${mib(meter.bytes)}${opts.output ? ` to ${opts.output}` : ''}`);
    });

  tenant
    .command('import')
    .description('import a tenant from an export file (same ids; 409 if it exists here)')
    .argument('[file]', "the export file ('-' or absent: stdin)")
    .addOption(formatOption())
    .action(async (file: string | undefined, opts: { format: Format }, cmd: Command) => {
      const conn = connect(globals(cmd));
      let source: NodeJS.ReadableStream;
      if (file && file !== '-') {
        if (!fs.existsSync(file)) throw new CliError(`no file '${file}'`);
        source = fs.createReadStream(file);
      } else {
        source = streams.stdin;
      }
      const meter = counting((n) => progress(`sent ${mib(n)}`));
      // The file is piped into the request as the connection takes it (./upload.ts): never held in memory.
      const r = await call(
        conn,
        'tenant import',
        sdk.importTenant({
          client: conn.client,
          body: '',
          bodySerializer: null,
          fetch: streamingFetch(source, (n) => meter.count(n)),
          signal: AbortSignal.timeout(TRANSFER_TIMEOUT_MS),
        } as Parameters<typeof sdk.importTenant>[0]),
      );
      if (opts.format === 'json') return print(`${JSON.stringify(r, null, 2)}\n`);
      const pairs: Array<[string, string]> = [
        ['tenant_id', r.tenant_id],
        ['slug', r.slug],
        ...Object.entries(r.counts).map(([t, n]): [string, string] => [`rows.${t}`, String(n)]),
      ];
      print(renderPairs(pairs, styles(cmd).out));
    });
}
