// dynalite ships no types; this is the part of its API that emulators.ts uses.
declare module "dynalite" {
  import type { Server } from "node:http";

  interface DynaliteOptions {
    /** LevelDB folder; in memory when absent. */
    path?: string;
    createTableMs?: number;
    deleteTableMs?: number;
    updateTableMs?: number;
    maxItemSizeKb?: number;
  }

  export default function dynalite(options?: DynaliteOptions): Server;
}
