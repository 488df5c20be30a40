import type { APIGatewayProxyEvent, Context } from 'aws-lambda';
import { randomBytes, randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { BINARY_MEDIA_TYPES, type Route } from '../routes';

export const LOCAL_STAGE = 'local';

/**
 * The `X-Amzn-Trace-Id` the function gets: the trace the client named (`Root=…`) or a new one, with a new
 * segment id for this invocation, and the host's sampling decision (by default every request is sampled and its
 * trace kept, lib/local/trace-collector.ts; the bench's host samples as the stack's rule does, `traceSampler`).
 */
export function traceHeaderFor(sent: string | string[] | undefined, sampled = true): string {
  const root = /(?:^|;)\s*Root=(1-[0-9a-f]{8}-[0-9a-f]{24})\s*(?:;|$)/.exec(typeof sent === 'string' ? sent : '')?.[1]
    ?? `1-${Math.floor(Date.now() / 1000).toString(16).padStart(8, '0')}-${randomBytes(12).toString('hex')}`;
  return `Root=${root};Parent=${randomBytes(8).toString('hex')};Sampled=${sampled ? 1 : 0}`;
}

/** An X-Ray sampling rule: `reservoirPerSecond` requests a second are traced, then `sampleRate` (0 to 1) of the rest. */
export interface TraceSampling {
  sampleRate: number;
  reservoirPerSecond: number;
}

/**
 * The sampling decision of each request under `rule`, as API Gateway's tracing makes it from the stack's rule
 * (lib/drive-stack.ts): the first `reservoirPerSecond` requests of each second, then each with chance `sampleRate`.
 */
export function traceSampler(rule: TraceSampling, clock: () => number = Date.now, random: () => number = Math.random): () => boolean {
  let second = -1;
  let taken = 0;
  return () => {
    const now = Math.floor(clock() / 1000);
    if (now !== second) {
      second = now;
      taken = 0;
    }
    if (taken < rule.reservoirPerSecond) {
      taken++;
      return true;
    }
    return random() < rule.sampleRate;
  };
}

/**
 * The event API Gateway's REST proxy integration would send for this request: single- and multi-value
 * headers and query parameters, and the body base64-encoded when its type is a binary media type.
 */
export function toProxyEvent(
  req: IncomingMessage,
  url: URL,
  route: Route,
  body: Buffer,
  pathParameters: Record<string, string> | null = null,
  requestId: string = randomUUID(),
  sampled = true,
): APIGatewayProxyEvent {
  // The host's own address, as API Gateway names its own domain: the client's Host header cannot change it.
  const domainName = `${req.socket.localAddress ?? '127.0.0.1'}:${req.socket.localPort ?? 0}`;
  // Maps keyed by what the client sent: without a prototype, a header named `__proto__` or `constructor` is a header.
  const headers: Record<string, string> = Object.create(null) as Record<string, string>;
  const multiValueHeaders: Record<string, string[]> = Object.create(null) as Record<string, string[]>;
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    const [name, value] = [req.rawHeaders[i], req.rawHeaders[i + 1]];
    // API Gateway sets these itself, whatever the client sent.
    if (/^(x-forwarded-(proto|port|for)|x-amzn-trace-id)$/i.test(name)) continue;
    headers[name] = value;
    (multiValueHeaders[name] ??= []).push(value);
  }
  // API Gateway tells the function how the client reached it.
  headers['X-Forwarded-Proto'] = 'http';
  multiValueHeaders['X-Forwarded-Proto'] = ['http'];
  // And, as a tracing stage does, which trace the request is in: the client's, if it sent a valid one.
  const trace = traceHeaderFor(req.headers['x-amzn-trace-id'], sampled);
  headers['X-Amzn-Trace-Id'] = trace;
  multiValueHeaders['X-Amzn-Trace-Id'] = [trace];

  let queryStringParameters: Record<string, string> | null = null;
  let multiValueQueryStringParameters: Record<string, string[]> | null = null;
  for (const [name, value] of url.searchParams) {
    (queryStringParameters ??= Object.create(null) as Record<string, string>)[name] = value;
    ((multiValueQueryStringParameters ??= Object.create(null) as Record<string, string[]>)[name] ??= []).push(value);
  }

  const isBase64Encoded = isBinary(headers, multiValueHeaders);
  return {
    resource: route.path,
    path: url.pathname,
    httpMethod: route.method,
    headers,
    multiValueHeaders,
    queryStringParameters,
    multiValueQueryStringParameters,
    pathParameters,
    stageVariables: null,
    body: body.length === 0 ? null : body.toString(isBase64Encoded ? 'base64' : 'utf8'),
    isBase64Encoded,
    requestContext: {
      accountId: '000000000000',
      apiId: 'local',
      authorizer: undefined,
      protocol: `HTTP/${req.httpVersion}`,
      httpMethod: route.method,
      path: url.pathname,
      stage: LOCAL_STAGE,
      requestId,
      requestTimeEpoch: Date.now(),
      resourceId: 'local',
      resourcePath: route.path,
      domainName,
      identity: {
        accessKey: null,
        accountId: null,
        apiKey: null,
        apiKeyId: null,
        caller: null,
        clientCert: null,
        cognitoAuthenticationProvider: null,
        cognitoAuthenticationType: null,
        cognitoIdentityId: null,
        cognitoIdentityPoolId: null,
        principalOrgId: null,
        sourceIp: req.socket.remoteAddress ?? '127.0.0.1',
        user: null,
        userAgent: req.headers['user-agent'] ?? null,
        userArn: null,
      },
    },
  };
}

/** A Lambda context for one invocation of `functionName`, which has `timeoutMs` to answer. */
export function lambdaContext(functionName: string, timeoutMs: number): Context {
  const deadline = Date.now() + timeoutMs;
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:local:000000000000:function:${functionName}`,
    memoryLimitInMB: '1024',
    awsRequestId: randomUUID(),
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName: 'local',
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}

function isBinary(headers: Record<string, string>, multi: Record<string, string[]>): boolean {
  const name = Object.keys(multi).find((key) => key.toLowerCase() === 'content-type');
  const type = (name ? headers[name] : '').split(';')[0].trim().toLowerCase();
  return BINARY_MEDIA_TYPES.some((binary) => binary === type || (binary.endsWith('/*') && type.startsWith(binary.slice(0, -1))));
}
