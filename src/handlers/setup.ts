/**
 * Tag `setup`: tenant administration (platform admins only).
 */
import { notBuilt } from './not-built';

export const getSetupStatus = notBuilt('getSetupStatus');
export const createTenant = notBuilt('createTenant');
export const listTenants = notBuilt('listTenants');
export const getTenant = notBuilt('getTenant');
export const updateTenant = notBuilt('updateTenant');
export const deleteTenant = notBuilt('deleteTenant');
