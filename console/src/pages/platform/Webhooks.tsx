// UNBUILT PAGE: replaced by the page's implementation (this line must not survive a merge).
import { Page } from '../../components/Page';

export default function Webhooks() {
  return <Page title="Webhooks">{null}</Page>;
}
