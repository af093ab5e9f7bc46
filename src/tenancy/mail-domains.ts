/** Public and disposable mail domains: the list lives in src/context/mail-domains.ts (domain code reads it too). */
export { isPublicMailDomain } from '../context/mail-domains';
