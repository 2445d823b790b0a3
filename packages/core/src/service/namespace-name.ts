/** A namespace's name, as every route and service that takes one checks it. */
import * as z from "zod";

export const NamespaceName = z
  .string()
  .regex(/^[a-z0-9_-]{1,64}$/, "a namespace name is 1 to 64 of a-z, 0-9, _ and -");
