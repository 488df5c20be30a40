import type * as Dashboard from '../../dashboard/api.js';
import type { components } from '../../client/src/generated/drive-api';

// The dashboard's JSDoc wire types, held to the OpenAPI document through the types openapi-typescript generates
// from it. The dashboard takes most of them from those generated types (dashboard/api.js); these
// checks keep them so if one is written by hand again. Type-checked by `tsc --noEmit -p test/dashboard-contract` (npm test), with the dashboard's own DOM lib;
// nothing here runs.

type Wire = components['schemas'];
/** True when A and B are the same type. */
type Same<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
/** True when every answer of wire type W is a value of the reader's type R, and R expects no field W lacks. */
type Reads<W, R> = [W] extends [R] ? ([Exclude<keyof R, keyof W>] extends [never] ? true : false) : false;

/** Holds only when every check is true. */
type AllTrue<T extends true[]> = T;

export type Checks = AllTrue<[
  Reads<Wire['FileEntry'], Dashboard.FileEntry>,
  Reads<Wire['FolderEntry'], Dashboard.FolderEntry>,
  Reads<Wire['Listing'], Dashboard.Listing>,
  Same<Wire['Role'], Dashboard.Role>,
  Reads<Wire['ApiKey'], Dashboard.ApiKey>,
  Reads<Wire['UploadSession'], Dashboard.UploadSession>,
  Reads<Wire['DeleteJob'], Dashboard.DeleteJob>,
  Reads<Wire['MoveJob'], Dashboard.Job>,
  Reads<Wire['CopyJob'], Dashboard.Job>,
  Reads<Wire['DeletedFolder'], Dashboard.Deletion>,
  Same<Wire['TrustRole'], Dashboard.TrustRole>,
  Reads<Wire['TrustRule'], Dashboard.TrustRule>,
]>;
