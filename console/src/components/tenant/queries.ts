/**
 * Invalidation by operation id: every cached page of an operation (any query, cursor or tenant
 * header) is marked stale at once, so a list never shows a row a mutation just changed.
 */
import type { QueryClient } from '@tanstack/react-query';

export function invalidateOperations(queryClient: QueryClient, ...operationIds: string[]): Promise<void> {
  return queryClient.invalidateQueries({
    predicate: (q) => {
      const head = q.queryKey[0] as { _id?: unknown } | undefined;
      return typeof head?._id === 'string' && operationIds.includes(head._id);
    },
  });
}
