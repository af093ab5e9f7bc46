/**
 * /tenant/directory (tenant admins): directory sync by SCIM 2.0 (docs/directory-sync.md). The
 * base URL to paste into Entra ID or Okta, the tenant's SCIM tokens (created with the secret
 * shown once, listed with when each was last used, revoked), the users it provisioned
 * (listDirectoryUsers), and which directory groups give which role (getScimSettings,
 * updateScimSettings).
 */
import { useQuery } from '@tanstack/react-query';
import { getScimSettingsOptions } from '@generated/@tanstack/react-query.gen';
import { DirectoryConnection, GroupRolesEditor } from '../../components/directory/DirectorySettings';
import { DirectoryUsers } from '../../components/directory/DirectoryUsers';
import { ScimTokens } from '../../components/directory/ScimTokens';
import { ErrorNotice } from '../../components/ErrorNotice';
import { Loading, Page } from '../../components/Page';
import { useSession } from '../../session';

export default function Directory() {
  const s = useSession();
  const settings = useQuery(getScimSettingsOptions({ headers: s.tenantHeaders }));
  return (
    <Page title="Directory">
      <p className="hint">
        Connect your company directory (Microsoft Entra ID, Okta or any SCIM 2.0 client) so that joiners, role changes and leavers reach this tenant without
        anyone acting here.
      </p>
      {settings.isPending ? <Loading what="the directory settings" /> : null}
      <ErrorNotice error={settings.error} />
      {settings.data ? <DirectoryConnection settings={settings.data} /> : null}
      <ScimTokens />
      <DirectoryUsers />
      {settings.data ? <GroupRolesEditor settings={settings.data} /> : null}
    </Page>
  );
}
