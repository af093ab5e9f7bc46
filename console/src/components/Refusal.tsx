import { Link } from '../router';
import { Page } from './Page';

/** The clear refusal a person sees on a page their role does not open. */
export function Refusal({ title, reason }: { title: string; reason: string }) {
  return (
    <Page title={title}>
      <div className="notice notice-error" role="alert">
        <p>
          <strong>Not allowed</strong>: {reason}
        </p>
      </div>
      <p>
        <Link to="/">Back to your tenants</Link>
      </p>
    </Page>
  );
}
