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
    /** Koa's middleware list (S3rver is a Koa app), composed when it starts listening. */
    middleware: unknown[];
    run(): Promise<AddressInfo>;
    close(callback: (error?: Error) => void): void;
  }
  export = S3rver;
}
