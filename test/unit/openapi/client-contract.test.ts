import { CODE_OF_STATUS, type DriveErrorCode, type DriveErrorReason } from '../../../client/src/errors';
import type * as Client from '../../../client/src/types';
import { ERROR_REASONS, ERROR_STATUS } from '../../../functions/core/errors';
import type { components } from '../../../client/src/generated/drive-api';

// The client's wire types and error codes, held to the OpenAPI document through the types
// openapi-typescript generates from it: `tsc --noEmit` (npm test) fails on a drift, and so does this suite.
// The client's types are taken from those generated types (client/src/types.ts); these checks keep them so
// if one is written by hand again.

type Wire = components['schemas'];
/** True when A and B are the same type. */
type Same<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
/** True when every answer of wire type W is a value of the reader's type R, and R expects no field W lacks. */
type Reads<W, R> = [W] extends [R] ? ([Exclude<keyof R, keyof W>] extends [never] ? true : false) : false;
const holds = <T extends true>(): T | undefined => undefined;

/** The client's own codes, for failures that never got an API answer or got one it cannot use. */
type ClientOnlyCode = 'network_error' | 'unexpected_response' | 'changed_during_download' | 'local_file_error';

// The client's codes are the API's and its own; its reasons are the API's.
holds<Same<Exclude<DriveErrorCode, ClientOnlyCode>, Wire['ErrorCode']>>();
holds<Same<DriveErrorReason, Wire['ErrorReason']>>();
// The client reads each answer into its types (fields it fills in itself, like already_gone, left out).
holds<Reads<Wire['File'], Client.DriveFile>>();
holds<Reads<Wire['FileEntry'], Client.DriveFileEntry>>();
holds<Reads<Wire['FolderEntry'], Client.DriveFolderEntry>>();
holds<Reads<Wire['Folder'], Client.DriveFolder>>();
holds<Reads<Wire['Listing'], Client.Listing>>();
holds<Reads<Wire['DeletedFiles'], Omit<Client.FilesDeletion, 'already_gone'>>>();
holds<Reads<Wire['DeletedFolder'], Omit<Client.FolderDeletion, 'alreadyGone'>>>();
holds<Reads<Wire['DeleteJob'], Client.DeleteJob>>();
holds<Reads<Wire['MoveJob'], Client.MoveJob>>();
holds<Reads<Wire['CopyJob'], Client.CopyJob>>();
holds<Reads<Wire['UploadSession'], Client.UploadSession>>();
holds<Reads<Wire['CreatedLink'], Client.ShareLink>>();
holds<Reads<Wire['Link'], Client.ShareLinkEntry>>();
// The dashboard's JSDoc types are held to it in test/dashboard-contract (type-checked with the dashboard's DOM lib).

describe('the client and the dashboard against the API contract', () => {
  it('gives each error status the code the API sends it with (a HEAD answer has no body to read it from)', () => {
    expect(Object.fromEntries(Object.entries(CODE_OF_STATUS).map(([status, code]) => [code, Number(status)]))).toEqual(ERROR_STATUS);
  });

  it('knows every reason the API may give', () => {
    const known: Record<DriveErrorReason, true> = { upload_busy: true, idempotency_in_progress: true, idempotency_key_reused: true };
    expect(Object.keys(known)).toEqual([...ERROR_REASONS]);
  });
});
