import createClient from 'openapi-fetch';
import type { components, paths } from '../../client/src/generated/drive-api';
import { type RunningHost, sharedHost, stopHost } from '../support/local-host';

// What a team on another stack does: generate a client from GET /openapi.json alone (here openapi-typescript's
// types, committed as client/src/generated/drive-api.ts, and openapi-fetch's calls) and use the API with it.

const SECRET = 'generated-client-AbJ9eQiGKwZ4ujW4Oc7R';

let host: RunningHost;

beforeAll(async () => {
  // The worker's host for files with the spec's rate limits (`sharedHost`); the drive is this file's own.
  host = await sharedHost({ DRIVE_API_KEYS: `generated:${SECRET}:admin` });
});

afterAll(() => stopHost(host));

const api = () => createClient<paths>({ baseUrl: host.url, headers: { Authorization: `Bearer ${SECRET}` } });

/** The multipart body a generated client sends: the form's fields as parts, each of `files` a file part (its Blob as typed). */
function uploadForm(body: { files: Blob[]; metadata?: string }): FormData {
  const form = new FormData();
  for (const file of body.files) form.append('files', file, file instanceof File ? file.name : 'file');
  if (body.metadata !== undefined) form.append('metadata', body.metadata);
  return form;
}

describe('a client generated from the OpenAPI document alone', () => {
  it('reads the document it was generated from at GET /openapi.json, with no key', async () => {
    const response = await fetch(`${host.url}/openapi.json`);
    const document = (await response.json()) as { openapi: string; servers: { url: string }[] };
    expect(response.status).toBe(200);
    expect(document.openapi).toBe('3.1.0');
    expect(document.servers[0].url).toBe(host.url);
  });

  it('creates a folder, uploads two files to it, lists, downloads and deletes it', async () => {
    // Prepare
    const client = api();
    const folder = '/generated/reports';

    // Act: each call typed by the generated paths.
    const created = await client.POST('/drive/folders', { body: { path: folder } });
    const uploaded = await client.POST('/drive/upload', {
      body: { files: [new File(['alpha bytes'], 'a.txt', { type: 'text/plain' }), new File(['beta'], 'b.txt', { type: 'text/plain' })], metadata: JSON.stringify([{ path: `${folder}/a.txt` }, { path: `${folder}/b.txt` }]) },
      bodySerializer: uploadForm,
    });
    const listed = await client.GET('/drive/list', { params: { query: { folder } } });
    const downloaded = await client.GET('/drive/download', { params: { query: { path: `${folder}/a.txt` } }, parseAs: 'text' });
    const deleted = await client.DELETE('/drive/folders', { params: { query: { path: '/generated', recursive: 'true' } } });
    const gone = await client.GET('/drive/list', { params: { query: { folder } } });

    // Assess
    const made: components['schemas']['Folder'] | undefined = created.data?.data;
    expect(made).toMatchObject({ path: folder });
    const files: components['schemas']['File'][] = uploaded.data?.data ?? [];
    expect(files.map((file) => [file.path, file.size])).toEqual([
      [`${folder}/a.txt`, 11],
      [`${folder}/b.txt`, 4],
    ]);
    expect(listed.data?.data.files.map((file) => file.name)).toEqual(['a.txt', 'b.txt']);
    expect(downloaded.data).toBe('alpha bytes');
    expect(deleted.data?.data).toEqual({ deleted: true, path: '/generated', files_deleted: 2 });
    expect(gone.response.status).toBe(404);
    expect(gone.error?.error.code).toBe('not_found');
  });

  it('reads an error as the document types it: code and message', async () => {
    const { error, response } = await createClient<paths>({ baseUrl: host.url }).GET('/drive/whoami');
    expect(response.status).toBe(401);
    const code: components['schemas']['ErrorCode'] | undefined = error?.error.code;
    expect(code).toBe('unauthorized');
  });
});
