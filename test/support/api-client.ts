/** A file to upload: its bytes, the filename of its part, and optionally the part's Content-Type. */
export interface FilePart {
  data: Uint8Array | string;
  filename: string;
  type?: string;
}

/** A small client for the API over real HTTP, as an app would call it. */
export class DriveClient {
  constructor(
    readonly baseUrl: string,
    readonly key: string,
  ) {}

  request(method: string, path: string, init: { body?: RequestInit['body']; headers?: Record<string, string> } = {}): Promise<Response> {
    return fetch(`${this.baseUrl}${path}`, {
      method,
      body: init.body,
      headers: { Authorization: `Bearer ${this.key}`, ...init.headers },
    });
  }

  upload(files: FilePart[], metadata?: unknown): Promise<Response> {
    const form = new FormData();
    for (const file of files) {
      const bytes = typeof file.data === 'string' ? Buffer.from(file.data) : file.data;
      form.append('files', new Blob([bytes], file.type ? { type: file.type } : {}), file.filename);
    }
    if (metadata !== undefined) form.append('metadata', typeof metadata === 'string' ? metadata : JSON.stringify(metadata));
    return this.request('POST', '/drive/upload', { body: form });
  }

  download(query: Record<string, string>): Promise<Response> {
    return this.request('GET', `/drive/download?${new URLSearchParams(query)}`);
  }

  list(query: Record<string, string> = {}): Promise<Response> {
    return this.request('GET', `/drive/list?${new URLSearchParams(query)}`);
  }

  createFolder(body: unknown): Promise<Response> {
    return this.request('POST', '/drive/folders', {
      body: typeof body === 'string' ? body : JSON.stringify(body),
      headers: { 'Content-Type': 'application/json' },
    });
  }

  deleteFolder(query: Record<string, string>): Promise<Response> {
    return this.request('DELETE', `/drive/folders?${new URLSearchParams(query)}`);
  }
}

export interface FileJson {
  id: string;
  name: string;
  path: string;
  url: string;
  size: number;
  created_at: string;
}
export type FileEntryJson = Omit<FileJson, 'url'>;
export interface FolderEntryJson {
  id: string;
  name: string;
  path: string;
}
export interface FolderJson {
  id: string;
  path: string;
  created_at: string;
}
export interface ListingJson {
  folder: string;
  files: FileEntryJson[];
  folders: FolderEntryJson[];
}
export interface DeletedJson {
  deleted: boolean;
  path: string;
  files_deleted: number;
}
export interface ErrorJson {
  /** `request_id`: the request's id, as its X-Request-Id header (or API Gateway's x-amzn-RequestId) gives it. */
  error: { code: string; message: string; request_id?: string };
}

/** The JSON body of a response together with its status, for one-line assertions. */
export async function json<T>(response: Response | Promise<Response>): Promise<{ status: number; body: T }> {
  const res = await response;
  return { status: res.status, body: (await res.json()) as T };
}
