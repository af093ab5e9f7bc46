// UNBUILT PAGE: replaced by the page's implementation (this line must not survive a merge).
import { Page } from '../../components/Page';

export default function WebhookDetail() {
  return <Page title="WebhookDetail">{null}</Page>;
}
