import { Page } from '../components/Page';
import { Link } from '../router';

export default function NotFound() {
  return (
    <Page title="Page not found">
      <p>The console has no page at this address.</p>
      <p>
        <Link to="/">Go to your tenants</Link>
      </p>
    </Page>
  );
}
