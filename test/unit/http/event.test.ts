import type { APIGatewayProxyEvent } from 'aws-lambda';
import { baseUrlOf, bodyOf, booleanParam, headerOf, queryParam } from '../../../functions/http/event';

const event = (overrides: Partial<APIGatewayProxyEvent>) =>
  ({
    resource: '/drive/upload',
    path: '/drive/upload',
    headers: {},
    multiValueHeaders: {},
    queryStringParameters: null,
    multiValueQueryStringParameters: null,
    requestContext: { path: '/drive/upload' },
    ...overrides,
  }) as unknown as APIGatewayProxyEvent;

describe('Function: baseUrlOf', () => {
  it('keeps the stage that API Gateway put before the route', () => {
    const e = event({ requestContext: { path: '/prod/drive/upload', domainName: 'abc.execute-api.eu-west-1.amazonaws.com' } as never });
    expect(baseUrlOf(e)).toBe('https://abc.execute-api.eu-west-1.amazonaws.com/prod');
  });

  it("keeps a custom domain's base path", () => {
    const e = event({ path: '/files/drive/upload', requestContext: { path: '/files/drive/upload', domainName: 'drive.example.com' } as never });
    expect(baseUrlOf(e)).toBe('https://drive.example.com/files');
  });

  it("follows API Gateway's domain, never the client's Host or X-Forwarded-Proto", () => {
    const e = event({
      headers: { Host: 'evil.example', 'x-forwarded-proto': 'javascript:alert(1)//', 'X-Forwarded-Host': 'evil.example' },
      multiValueHeaders: { Host: ['evil.example'], 'x-forwarded-proto': ['javascript:alert(1)//'] },
      requestContext: { path: '/prod/drive/upload', domainName: 'abc.execute-api.eu-west-1.amazonaws.com' } as never,
    });
    expect(baseUrlOf(e)).toBe('https://abc.execute-api.eu-west-1.amazonaws.com/prod');
  });
});

describe('query and header helpers', () => {
  it('reads headers whatever their case', () => {
    expect(headerOf(event({ headers: { 'content-TYPE': 'text/plain' } }), 'Content-Type')).toBe('text/plain');
  });

  it('rejects a repeated parameter and a boolean that is neither true nor false', () => {
    const repeated = event({ multiValueQueryStringParameters: { folder: ['/a', '/b'] }, queryStringParameters: { folder: '/b' } });
    expect(() => queryParam(repeated, 'folder')).toThrow(/folder is given 2 times/);
    expect(() => booleanParam(event({ queryStringParameters: { recursive: '1' } }), 'recursive')).toThrow(/recursive must be "true" or "false"/);
    expect(booleanParam(event({ queryStringParameters: { recursive: 'true' } }), 'recursive')).toBe(true);
    expect(booleanParam(event({}), 'recursive')).toBe(false);
  });
});

describe('Function: bodyOf', () => {
  it('decodes base64 and text bodies, and an absent one as no bytes', () => {
    expect(bodyOf(event({ body: Buffer.from([0, 255, 1]).toString('base64'), isBase64Encoded: true }))).toEqual(Buffer.from([0, 255, 1]));
    expect(bodyOf(event({ body: 'héllo', isBase64Encoded: false }))).toEqual(Buffer.from('héllo', 'utf8'));
    expect(bodyOf(event({ body: null }))).toEqual(Buffer.alloc(0));
  });

  it('decodes an event once: a second read (an Idempotency-Key fingerprint, then the operation) gets the same bytes', () => {
    const e = event({ body: Buffer.from('the file').toString('base64'), isBase64Encoded: true });
    const decode = jest.spyOn(Buffer, 'from');
    const first = bodyOf(e);
    expect(bodyOf(e)).toBe(first);
    expect(decode).toHaveBeenCalledTimes(1);
    decode.mockRestore();
  });

  it('decodes again when the event holds another body, or the same text under the other encoding', () => {
    const e = event({ body: 'YWJj', isBase64Encoded: true });
    expect(bodyOf(e).toString()).toBe('abc');
    e.isBase64Encoded = false;
    expect(bodyOf(e).toString()).toBe('YWJj');
    e.body = 'other';
    expect(bodyOf(e).toString()).toBe('other');
  });
});
