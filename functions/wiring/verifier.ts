import { OidcVerifier } from '../http/oidc-verifier';
import { loopbackIssuers } from './trust';

/** Identity tokens checked against their issuers' keys, cached for the life of the container (only the exchange loads jose). */
export const verifier = new OidcVerifier({ loopback: loopbackIssuers });
