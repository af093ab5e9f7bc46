/**
 * Objection models, one per table. They are storage shapes, never API responses: handlers map
 * them to the generated types explicitly, so a new column never leaks.
 *
 * No model is bound to the pool (there is no `Model.knex(db)`): every query names its
 * transaction, `XRow.query(trx)`, so it runs under that transaction's role and tenant
 * (src/db/tenant-scope.ts) and a query without one fails loudly instead of running outside
 * row-level security. Relations join on the composite (tenant_id, …) keys, like the foreign keys.
 *
 * Append new models at the end (one file). The meaning of each table's constraints to a client
 * is in ./constraint-errors.ts.
 */
import { fn, Model, type RelationMappings } from 'objection';
import type { TenantStatus } from '../context/tenant-status';
import type { RoleKey } from '../context/roles';

/** The transaction's timestamp (`now()`), for a timestamp column in an insert or patch. */
export const databaseNow = (): Date => fn.now() as unknown as Date;

/** Models are plain rows: no validation or JSON schema of their own (the contract validates input). */
abstract class Row extends Model {
  // Objection would otherwise stringify only attributes named in a JSON schema.
  static override jsonAttributes: string[] = [];
}

export class TenantRow extends Row {
  static override tableName = 'tenants';
  static override jsonAttributes = ['settings', 'registration'];
  id!: string;
  name!: string;
  slug!: string;
  settings!: Record<string, unknown>;
  status!: TenantStatus;
  is_default!: boolean;
  created_by_issuer!: string | null;
  created_by_subject!: string | null;
  registration!: Record<string, unknown> | null;
  provision_from_claims!: boolean;
  claims_issuer!: string | null;
  roles_from_claims!: boolean;
  suspended_at!: Date | null;
  suspension_reason!: string | null;
  delete_after!: Date | null;
  status_before_deletion!: Exclude<TenantStatus, 'pending_deletion'> | null;
  created_at!: Date;
  updated_at!: Date;

  static override get relationMappings(): RelationMappings {
    return {
      users: { relation: Model.HasManyRelation, modelClass: UserRow, join: { from: 'tenants.id', to: 'users.tenant_id' } },
      boards: { relation: Model.HasManyRelation, modelClass: BoardRow, join: { from: 'tenants.id', to: 'boards.tenant_id' } },
    };
  }
}

export class UserRow extends Row {
  static override tableName = 'users';
  static override idColumn = ['tenant_id', 'id'];
  tenant_id!: string;
  id!: string;
  issuer!: string;
  subject!: string;
  email!: string | null;
  display_name!: string | null;
  role!: RoleKey;
  created_at!: Date;

  static override get relationMappings(): RelationMappings {
    return {
      tenant: { relation: Model.BelongsToOneRelation, modelClass: TenantRow, join: { from: 'users.tenant_id', to: 'tenants.id' } },
      boardMemberships: {
        relation: Model.HasManyRelation,
        modelClass: BoardMemberRow,
        join: { from: ['users.tenant_id', 'users.id'], to: ['board_members.tenant_id', 'board_members.user_id'] },
      },
    };
  }
}

export class BoardRow extends Row {
  static override tableName = 'boards';
  static override idColumn = ['tenant_id', 'id'];
  tenant_id!: string;
  id!: string;
  name!: string;
  description!: string | null;
  created_by!: string | null;
  created_at!: Date;

  static override get relationMappings(): RelationMappings {
    return {
      creator: {
        relation: Model.BelongsToOneRelation,
        modelClass: UserRow,
        join: { from: ['boards.tenant_id', 'boards.created_by'], to: ['users.tenant_id', 'users.id'] },
      },
      generations: {
        relation: Model.HasManyRelation,
        modelClass: GenerationRow,
        join: { from: ['boards.tenant_id', 'boards.id'], to: ['generations.tenant_id', 'generations.board_id'] },
      },
      members: {
        relation: Model.HasManyRelation,
        modelClass: BoardMemberRow,
        join: { from: ['boards.tenant_id', 'boards.id'], to: ['board_members.tenant_id', 'board_members.board_id'] },
      },
    };
  }
}

export class BoardMemberRow extends Row {
  static override tableName = 'board_members';
  static override idColumn = ['tenant_id', 'board_id', 'user_id'];
  tenant_id!: string;
  board_id!: string;
  user_id!: string;
  role!: 'owner' | 'editor' | 'viewer';
  created_at!: Date;

  static override get relationMappings(): RelationMappings {
    return {
      board: {
        relation: Model.BelongsToOneRelation,
        modelClass: BoardRow,
        join: { from: ['board_members.tenant_id', 'board_members.board_id'], to: ['boards.tenant_id', 'boards.id'] },
      },
      user: {
        relation: Model.BelongsToOneRelation,
        modelClass: UserRow,
        join: { from: ['board_members.tenant_id', 'board_members.user_id'], to: ['users.tenant_id', 'users.id'] },
      },
    };
  }
}

export class GenerationRow extends Row {
  static override tableName = 'generations';
  static override idColumn = ['tenant_id', 'id'];
  tenant_id!: string;
  id!: string;
  board_id!: string;
  prompt!: string;
  status!: 'pending' | 'running' | 'completed' | 'failed';
  media_url!: string | null;
  media_type!: string | null;
  created_at!: Date;

  static override get relationMappings(): RelationMappings {
    return {
      board: {
        relation: Model.BelongsToOneRelation,
        modelClass: BoardRow,
        join: { from: ['generations.tenant_id', 'generations.board_id'], to: ['boards.tenant_id', 'boards.id'] },
      },
    };
  }
}

export class ProviderConfigRow extends Row {
  static override tableName = 'provider_configs';
  static override idColumn = ['tenant_id', 'id'];
  static override jsonAttributes = ['config'];
  tenant_id!: string;
  id!: string;
  provider!: string;
  config!: Record<string, unknown>;
  created_at!: Date;
}

export class CreditTransactionRow extends Row {
  static override tableName = 'credit_transactions';
  static override idColumn = ['tenant_id', 'id'];
  tenant_id!: string;
  id!: string;
  user_id!: string | null;
  seq!: string;
  kind!: 'grant' | 'usage' | 'refund' | 'adjustment';
  amount!: number;
  balance_after!: number;
  description!: string | null;
  created_at!: Date;

  static override get relationMappings(): RelationMappings {
    return {
      user: {
        relation: Model.BelongsToOneRelation,
        modelClass: UserRow,
        join: { from: ['credit_transactions.tenant_id', 'credit_transactions.user_id'], to: ['users.tenant_id', 'users.id'] },
      },
    };
  }
}

/** A stored Idempotency-Key of `POST /api/setup/tenant` (platform table, no tenant scope). */
export class IdempotencyKeyRow extends Row {
  static override tableName = 'idempotency_keys';
  static override idColumn = ['caller', 'key'];
  static override jsonAttributes = ['response'];
  caller!: string;
  key!: string;
  request_hash!: string;
  tenant_id!: string | null;
  response!: Record<string, unknown>;
  created_at!: Date;
}

export class InvitationRow extends Model {
  static override tableName = 'invitations';
  static override idColumn = ['tenant_id', 'id'];
  tenant_id!: string;
  id!: string;
  email!: string;
  role!: RoleKey;
  token_hash!: string;
  /** Stored status; `expired` is also computed on read from `expires_at`. */
  status!: 'pending' | 'accepted' | 'revoked' | 'expired';
  expires_at!: Date;
  invited_by!: string | null;
  invited_by_email!: string | null;
  accepted_by!: string | null;
  accepted_at!: Date | null;
  revoked_at!: Date | null;
  delivery!: 'sent' | 'failed' | 'not_configured';
  created_at!: Date;
  updated_at!: Date;
}
