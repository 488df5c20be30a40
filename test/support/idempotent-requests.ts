/** An answer read whole: its status, headers and body text. */
export interface Sent {
  status: number;
  headers: Headers;
  text: string;
}

export interface FileToSend {
  name: string;
  data: string;
}

/** A multipart upload body with a fixed boundary: the same files make the same bytes, as a retry sends them. */
export function uploadBody(files: FileToSend[], folder: string): { body: Buffer; contentType: string } {
  const boundary = 'idempotency0test0boundary';
  const parts: Buffer[] = [];
  for (const file of files) parts.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="files"; filename="${file.name}"\r\nContent-Type: text/plain\r\n\r\n${file.data}\r\n`));
  parts.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="metadata"\r\n\r\n${JSON.stringify(files.map(() => ({ folder })))}\r\n--${boundary}--\r\n`));
  return { body: Buffer.concat(parts), contentType: `multipart/form-data; boundary=${boundary}` };
}

/**
 * Requests to the host at `url()` (read at each call: the host starts after this is made) with API key `key`
 * unless one is named, each with an Idempotency-Key when one is given: the idempotency tests' way to send.
 */
export function idempotentRequests(url: () => string, key: string) {
  const send = async (method: string, path: string, init: { body?: Buffer | string; contentType?: string; idempotencyKey?: string; key?: string } = {}): Promise<Sent> => {
    const res = await fetch(`${url()}${path}`, {
      method,
      body: init.body,
      headers: {
        Authorization: `Bearer ${init.key ?? key}`,
        ...(init.contentType ? { 'Content-Type': init.contentType } : {}),
        ...(init.idempotencyKey !== undefined ? { 'Idempotency-Key': init.idempotencyKey } : {}),
      },
    });
    return { status: res.status, headers: res.headers, text: await res.text() };
  };
  return {
    send,
    /** `body` as JSON. */
    json: (method: string, path: string, body: unknown, idempotencyKey?: string) => send(method, path, { body: JSON.stringify(body), contentType: 'application/json', idempotencyKey }),
    /** `POST /drive/upload` of `files` into `folder`. */
    upload: (files: FileToSend[], folder: string, idempotencyKey?: string, key?: string) => send('POST', '/drive/upload', { ...uploadBody(files, folder), idempotencyKey, key }),
  };
}
