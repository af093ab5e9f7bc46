/**
 * The tenant's directory users (listDirectoryUsers, docs/directory-sync.md): everyone the
 * directory provisioned, a page at a time, deactivated ones and those who have not signed in
 * yet included, with the groups that hold them and the role those groups give.
 */
import { useQuery } from '@tanstack/react-query';
import { listDirectoryUsersOptions } from '@generated/@tanstack/react-query.gen';
import { ErrorNotice } from '../ErrorNotice';
import { Loading } from '../Page';
import { Pager, useCursorPager } from '../Pager';
import { useSession } from '../../session';

const PAGE_SIZE = 50;

export function DirectoryUsers() {
  const s = useSession();
  const pager = useCursorPager();
  const list = useQuery(listDirectoryUsersOptions({ headers: s.tenantHeaders, query: { limit: PAGE_SIZE, ...(pager.cursor ? { cursor: pager.cursor } : {}) } }));
  return (
    <section aria-labelledby="directory-users-heading">
      <h2 id="directory-users-heading">Directory users</h2>
      <p className="hint">
        Everyone your directory provisioned. A person becomes a member at their first sign-in; a deactivated one is refused at every request. Their role comes
        from their groups: change it in the directory, or in the mapping below.
      </p>
      {list.isPending ? <Loading what="the directory users" /> : null}
      <ErrorNotice error={list.error} />
      {list.data ? (
        <>
          {list.data.users.length === 0 && pager.page === 1 ? (
            <p>No directory users yet: they appear here once the directory provisions them.</p>
          ) : (
            <table>
              <caption className="visually-hidden">Directory users</caption>
              <thead>
                <tr>
                  <th scope="col">User name</th>
                  <th scope="col">Name</th>
                  <th scope="col">Status</th>
                  <th scope="col">Signed in</th>
                  <th scope="col">Role</th>
                  <th scope="col">Groups</th>
                </tr>
              </thead>
              <tbody>
                {list.data.users.map((u) => (
                  <tr key={u.directory_user_id}>
                    <td>{u.user_name}</td>
                    <td>{u.display_name ?? '—'}</td>
                    <td>{u.active ? 'Active' : <span className="badge">Deactivated</span>}</td>
                    <td>{u.member_id ? 'Yes' : 'Not yet'}</td>
                    <td>{u.role}</td>
                    <td>{u.groups.length ? u.groups.map((g) => g.display_name).join(', ') : '—'}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
          <Pager label="Directory users pages" page={pager.page} nextCursor={list.data.next_cursor} onNext={pager.next} onPrevious={pager.previous} />
        </>
      ) : null}
    </section>
  );
}
