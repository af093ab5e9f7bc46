/**
 * Tag `audit`: the cross-tenant isolation audit (platform admins only).
 */
import { notBuilt } from './not-built';

export const auditTenants = notBuilt('auditTenants');
