/**
 * Sample data (docs/tenants.md#tenant-administration): two boards with a few generations each
 * (with media URLs), one provider configuration and one credit grant. The same content every time.
 */
import { BoardMemberRow, BoardRow, CreditTransactionRow, GenerationRow, ProviderConfigRow } from '../db/models';
import type { Transaction } from '../db/tenant-scope';

export const SAMPLE_BOARDS = [
  {
    name: 'Product launch',
    description: 'Hero images and social posts for the spring launch.',
    generations: [
      { prompt: 'A minimalist hero image of the product on a pastel background', media: 'launch-hero.png', type: 'image/png' },
      { prompt: 'Square social post announcing the launch date', media: 'launch-social.png', type: 'image/png' },
      { prompt: 'Ten-second teaser clip with the logo reveal', media: 'launch-teaser.mp4', type: 'video/mp4' },
    ],
  },
  {
    name: 'Brand guidelines',
    description: 'Reference visuals for colours, type and tone.',
    generations: [
      { prompt: 'Colour palette swatches in the brand colours', media: 'brand-palette.png', type: 'image/png' },
      { prompt: 'Typography specimen sheet for headings and body text', media: 'brand-type.png', type: 'image/png' },
    ],
  },
] as const;

export const SAMPLE_PROVIDER = { provider: 'sample-image-provider', config: { model: 'sample-v1', size: '1024x1024' } } as const;
export const SAMPLE_CREDIT_GRANT = 1000;
const MEDIA_BASE = 'https://media.example.com/samples/';

/** Inserts the sample rows for `tenantId`; `trx` must already be scoped to that tenant. */
export async function insertSampleData(trx: Transaction, tenantId: string, ownerUserId: string | null): Promise<void> {
  for (const board of SAMPLE_BOARDS) {
    const row = await BoardRow.query(trx)
      .insert({ tenant_id: tenantId, name: board.name, description: board.description, created_by: ownerUserId })
      .returning('id');
    await GenerationRow.query(trx).insert(
      board.generations.map((g) => ({
        tenant_id: tenantId,
        board_id: row.id,
        prompt: g.prompt,
        status: 'completed' as const,
        media_url: MEDIA_BASE + g.media,
        media_type: g.type,
      })),
    );
    if (ownerUserId) await BoardMemberRow.query(trx).insert({ tenant_id: tenantId, board_id: row.id, user_id: ownerUserId, role: 'owner' });
  }
  await ProviderConfigRow.query(trx).insert({ tenant_id: tenantId, provider: SAMPLE_PROVIDER.provider, config: { ...SAMPLE_PROVIDER.config } });
  await CreditTransactionRow.query(trx).insert({
    tenant_id: tenantId,
    user_id: ownerUserId,
    kind: 'grant',
    amount: SAMPLE_CREDIT_GRANT,
    balance_after: SAMPLE_CREDIT_GRANT,
    description: 'Welcome credits',
  });
}
