// UNBUILT PAGE: replaced by the page's implementation (this line must not survive a merge).
import { Page } from '../../components/Page';

export default function Events() {
  return <Page title="Events">{null}</Page>;
}
