/**
 * `tenantctl webhooks list|create|delete`: webhook endpoints on the generated client (platform
 * admin). create prints the signing secret, which the server never shows again.
 */
import { type Command, InvalidArgumentError } from 'commander';
import * as sdk from '../../generated/sdk.gen';
import type { Webhook } from '../../generated/types.gen';
import { call, connect, REQUEST_TIMEOUT_MS } from './api';
import type { CommandHelpers, Format } from './command';
import { renderPairs, renderTable } from './output';
import { UUID } from './tenant-scope';

const SECRET_WARNING = 'Store this secret now: it is shown only once, and every delivery is signed with it.';

function parseEvents(v: string): string[] {
  const events = v
    .split(',')
    .map((e) => e.trim())
    .filter(Boolean);
  if (!events.length) throw new InvalidArgumentError('--events must list at least one action or category, e.g. tenant.*,member.added');
  return events;
}

function parseWebhookId(v: string): string {
  if (!UUID.test(v)) throw new InvalidArgumentError('expected a webhook id (UUID), as printed by webhooks create or list.');
  return v.toLowerCase();
}

export function registerWebhooksCommands(program: Command, h: CommandHelpers): void {
  const { globals, styles, formatOption, print } = h;
  const webhooks = program.command('webhooks').description('list, create and delete webhook endpoints (platform admin)');

  webhooks
    .command('list')
    .description('list every webhook endpoint, oldest first (secrets are never shown again)')
    .addOption(formatOption())
    .action(async (opts: { format: Format }, cmd: Command) => {
      const conn = connect(globals(cmd));
      const { webhooks: list } = await call(conn, 'webhooks list', sdk.listWebhooks({ client: conn.client, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) }));
      if (opts.format === 'json') return print(`${JSON.stringify({ webhooks: list }, null, 2)}\n`);
      if (!list.length) return print('No webhooks.\n');
      print(
        renderTable(
          list,
          [
            { header: 'WEBHOOK ID', value: (w) => w.webhook_id },
            { header: 'URL', value: (w) => w.url },
            { header: 'EVENTS', value: (w) => w.events.join(',') },
            { header: 'ENABLED', value: (w) => String(w.enabled) },
            { header: 'DESCRIPTION', value: (w) => w.description ?? '-' },
          ],
          styles(cmd).out,
        ),
      );
      print(`${list.length} webhook${list.length === 1 ? '' : 's'}\n`);
    });

  webhooks
    .command('create')
    .description('create an endpoint receiving the events that match; prints its signing secret once')
    // A positional URL: `--url` is the global option naming the service, and commander gives it to the program wherever it appears.
    .argument('<url>', 'where deliveries are POSTed (http or https, on a public network unless the service allows private ones)')
    .requiredOption('--events <patterns>', 'comma-separated actions or categories: member.added, tenant.*, or *', parseEvents)
    .option('--description <text>', 'what the endpoint is for')
    .addOption(formatOption())
    .action(async (url: string, opts: { events: string[]; description?: string; format: Format }, cmd: Command) => {
      const conn = connect(globals(cmd));
      const created = await call(
        conn,
        'webhooks create',
        sdk.createWebhook({
          client: conn.client,
          body: { url, events: opts.events, ...(opts.description !== undefined ? { description: opts.description } : {}) },
          signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
        }),
      );
      if (opts.format === 'json') {
        h.progress(SECRET_WARNING);
        return print(`${JSON.stringify(created, null, 2)}\n`);
      }
      const { out } = styles(cmd);
      print(`${out.green(`Webhook ${created.webhook_id} created.`)}\n`);
      print(renderPairs([...webhookPairs(created), ['secret', created.secret]], out));
      print(`${out.bold(SECRET_WARNING)}\n`);
    });

  webhooks
    .command('delete')
    .description('delete an endpoint: its pending deliveries are never sent')
    .argument('<webhook-id>', 'the webhook id', parseWebhookId)
    .addOption(formatOption())
    .action(async (id: string, opts: { format: Format }, cmd: Command) => {
      const conn = connect(globals(cmd));
      await call(conn, 'webhooks delete', sdk.deleteWebhook({ client: conn.client, path: { webhook_id: id }, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) }));
      if (opts.format === 'json') return print(`${JSON.stringify({ webhook_id: id, deleted: true }, null, 2)}\n`);
      print(`${styles(cmd).out.green(`Webhook ${id} deleted.`)}\n`);
    });
}

function webhookPairs(w: Webhook): Array<[string, string]> {
  return [
    ['webhook_id', w.webhook_id],
    ['url', w.url],
    ['events', w.events.join(',')],
    ['enabled', String(w.enabled)],
    ['description', w.description ?? '-'],
    ['created_at', w.created_at],
  ];
}
