/**
 * Tag `tenant`: the resolved tenant and its members.
 */
import { notBuilt } from './not-built';

export const getCurrentTenant = notBuilt('getCurrentTenant');
export const listMembers = notBuilt('listMembers');
export const addMember = notBuilt('addMember');
export const removeMember = notBuilt('removeMember');
