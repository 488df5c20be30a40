// The emulators ship no type declarations; these cover what the local host uses.
declare module 'dynalite' {
  import type { Server } from 'node:http';
  interface DynaliteOptions {
    path?: string;
    createTableMs?: number;
    deleteTableMs?: number;
    updateTableMs?: number;
  }
  function dynalite(options?: DynaliteOptions): Server;
  export = dynalite;
}

declare module 's3rver' {
  import type { AddressInfo } from 'node:net';
  interface S3rverOptions {
    address?: string;
    port?: number;
    directory: string;
    silent?: boolean;
    configureBuckets?: { name: string; configs: string[] }[];
  }
  class S3rver {
    constructor(options: S3rverOptions);
    /** Koa's middleware list (S3rver is a Koa app), composed when it starts listening or by `callback()`. */
    middleware: unknown[];
    /** Koa's request listener of the middleware as it is now. */
    callback(): import('node:http').RequestListener;
    /** Its winston logger, which its server's close lets go. */
    logger: { exceptions: { unhandle(): void }; close(): void };
    /** Where it keeps buckets and objects (its filesystem store). */
    store: { putObjectMultipart(bucket: string, uploadId: string, parts: { number: number; etag: string }[]): Promise<unknown> };
    run(): Promise<AddressInfo>;
    /** Creates the configured buckets (what `run()` does before it listens). */
    configureBuckets(): Promise<void>;
    /** Listens on a port or a socket path; resolves with the server. */
    listen(path: string): Promise<import('node:http').Server>;
    close(callback: (error?: Error) => void): void;
  }
  export = S3rver;
}

declare module 's3rver/lib/models/error' {
  /** An error s3rver renders as S3's XML, with the status S3 gives its code. */
  class S3Error extends Error {
    constructor(code: string, message: string, detail?: Record<string, string>);
  }
  export = S3Error;
}

declare module 's3rver/lib/models/account' {
  /** The account s3rver signs requests for; its key pairs are the access keys it knows. */
  export const DUMMY_ACCOUNT: { createKeyPair(accessKeyId: string, secretAccessKey: string): void };
}

declare module 's3rver/lib/stores/filesystem' {
  /** s3rver's store of buckets and objects as files under `rootDirectory`. */
  class FilesystemStore {
    constructor(rootDirectory: string);
    /** Makes the bucket's folder (test/support/local-host.ts seeds a data dir through the store). */
    putBucket(bucket: string): Promise<void>;
    /** Writes an object and its metadata, as its HTTP PUT does; resolves with its size and hex MD5. */
    putObject(object: import('s3rver/lib/models/object')): Promise<{ size: number; md5: string }>;
  }
  export = FilesystemStore;
}

declare module 's3rver/lib/models/object' {
  /** An object as s3rver's store takes it: its bytes and the metadata kept beside them (`content-type`, …). */
  class S3Object {
    constructor(bucket: string, key: string, content: Buffer, metadata: Record<string, string>);
    /** The headers the store keeps with an object, beside every `x-amz-meta-*`. */
    static ALLOWED_METADATA: readonly string[];
  }
  export = S3Object;
}

declare module 'dynalite/db' {
  /** Opens dynalite's store (LevelDB at `path`), as its server does (lib/local/embedded-dynalite.ts). */
  export function create(options: object): unknown;
  /** An item's size as DynamoDB counts it toward its limits: attribute names and values, in bytes. */
  export function itemSize(item: Record<string, unknown>): number;
}

declare module 'dynalite/validations' {
  /** dynalite's request checks: a body's types (coerced), then its constraints. */
  export function checkTypes(data: unknown, types: unknown): unknown;
  export function checkValidations(data: unknown, types: unknown, custom: unknown, store: unknown): void;
}

declare module 'dynalite/actions/*' {
  /** One of dynalite's operations on its store (lib/local/embedded-dynalite.ts calls them). */
  const action: (store: never, data: unknown, cb: (error: (Error & { statusCode?: number; body?: unknown }) | null, data?: unknown) => void) => void;
  export = action;
}

declare module 'dynalite/validations/*' {
  /** The types and constraints of one operation's request. */
  const validation: { types: unknown; custom?: unknown };
  export = validation;
}
