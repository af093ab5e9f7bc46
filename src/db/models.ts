/**
 * Objection models. They are storage shapes, never API responses: handlers map them to the
 * generated types explicitly, so a new column never leaks.
 */
import { Model } from 'objection';

export class TenantRow extends Model {
  static override tableName = 'tenants';
  id!: string;
  name!: string;
  slug!: string;
  settings!: Record<string, unknown>;
  status!: 'active' | 'pending_approval';
  is_default!: boolean;
  created_by_issuer!: string | null;
  created_by_subject!: string | null;
  registration!: Record<string, unknown> | null;
  created_at!: Date;
  updated_at!: Date;
}

export class UserRow extends Model {
  static override tableName = 'users';
  static override idColumn = ['tenant_id', 'id'];
  tenant_id!: string;
  id!: string;
  issuer!: string;
  subject!: string;
  email!: string | null;
  display_name!: string | null;
  role!: 'admin' | 'member';
  created_at!: Date;
}

export class BoardRow extends Model {
  static override tableName = 'boards';
  static override idColumn = ['tenant_id', 'id'];
  tenant_id!: string;
  id!: string;
  name!: string;
  description!: string | null;
  created_by!: string | null;
  created_at!: Date;
}

export class BoardMemberRow extends Model {
  static override tableName = 'board_members';
  static override idColumn = ['tenant_id', 'board_id', 'user_id'];
  tenant_id!: string;
  board_id!: string;
  user_id!: string;
  role!: 'owner' | 'editor' | 'viewer';
  created_at!: Date;
}

export class GenerationRow extends Model {
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
}

export class ProviderConfigRow extends Model {
  static override tableName = 'provider_configs';
  static override idColumn = ['tenant_id', 'id'];
  tenant_id!: string;
  id!: string;
  provider!: string;
  config!: Record<string, unknown>;
  created_at!: Date;
}

export class CreditTransactionRow extends Model {
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
}
