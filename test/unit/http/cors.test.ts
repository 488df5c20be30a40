import type { APIGatewayProxyEvent } from 'aws-lambda';
import { corsHeaders } from '../../../functions/http/cors';

const from = (origin?: string) => ({ headers: origin ? { Origin: origin } : {}, multiValueHeaders: {} }) as unknown as APIGatewayProxyEvent;

describe('Function: corsHeaders', () => {
  it('allows a configured origin and exposes the headers clients pace and name files by', () => {
    const headers = corsHeaders(from('https://app.example.com'), ['https://app.example.com']);
    expect(headers['Access-Control-Allow-Origin']).toBe('https://app.example.com');
    const exposed = headers['Access-Control-Expose-Headers'].split(', ');
    expect(exposed).toEqual(expect.arrayContaining(['Retry-After', 'Content-Disposition', 'ETag', 'Content-Range', 'Accept-Ranges']));
    expect(headers.Vary).toBe('Origin');
  });

  it('allows nobody else, and nobody when none are configured', () => {
    expect(corsHeaders(from('https://evil.example'), ['https://app.example.com'])['Access-Control-Allow-Origin']).toBeUndefined();
    expect(corsHeaders(from('https://app.example.com'), [])).toEqual({});
    expect(corsHeaders(from(undefined), ['*'])).toEqual({});
  });

  it('allows any origin with *', () => {
    expect(corsHeaders(from('https://x.example'), ['*'])['Access-Control-Allow-Origin']).toBe('*');
  });
});
