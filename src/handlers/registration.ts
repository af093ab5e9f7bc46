/**
 * Tag `registration`: self-service tenant registration.
 */
import { notBuilt } from './not-built';

export const getRegistrationStatus = notBuilt('getRegistrationStatus');
export const registerTenant = notBuilt('registerTenant');
export const listMyTenants = notBuilt('listMyTenants');
