import type { APIGatewayProxyEvent, APIGatewayProxyResult, StreamifyHandler } from 'aws-lambda';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Caller, Endpoint } from '../core/access';
import { corsHeaders } from './cors';
import type { Guard } from './guard';
import { type Headers, errorResponse, ok } from './respond';

/** A buffered endpoint: guard, then `operation`, whose result is sent in the `data` envelope. */
export function jsonHandler(
  endpoint: Endpoint,
  guard: Guard,
  operation: (event: APIGatewayProxyEvent, caller: Caller) => Promise<unknown>,
): (event: APIGatewayProxyEvent) => Promise<APIGatewayProxyResult> {
  return async (event) => {
    let headers: Headers = corsHeaders(event);
    try {
      const admitted = await guard(endpoint, event);
      headers = { ...headers, ...admitted.headers };
      return ok(await operation(event, admitted.caller), headers);
    } catch (error) {
      return errorResponse(error, headers);
    }
  };
}

/** A streamed endpoint: guard, then `operation`, whose body is piped to the client as it is read. */
export function streamingHandler(
  endpoint: Endpoint,
  guard: Guard,
  operation: (event: APIGatewayProxyEvent, caller: Caller) => Promise<{ headers: Headers; body: Readable }>,
): StreamifyHandler<APIGatewayProxyEvent, void> {
  return async (event, responseStream) => {
    let headers: Headers = corsHeaders(event);
    let result: { headers: Headers; body: Readable };
    try {
      const admitted = await guard(endpoint, event);
      headers = { ...headers, ...admitted.headers };
      result = await operation(event, admitted.caller);
    } catch (error) {
      const failure = errorResponse(error, headers);
      const stream = awslambda.HttpResponseStream.from(responseStream, { statusCode: failure.statusCode, headers: failure.headers });
      await new Promise<void>((resolve) => stream.end(failure.body, resolve));
      return;
    }
    const stream = awslambda.HttpResponseStream.from(responseStream, { statusCode: 200, headers: { ...headers, ...result.headers } });
    await pipeline(result.body, stream);
  };
}
