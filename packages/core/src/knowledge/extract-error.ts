/** The error of a document that cannot be read, shared by the readers of each kind. */
import { StackVMError } from "../errors";

/** A document that cannot be read; permanent, so the ingest records it and stops. */
export class ExtractError extends StackVMError {
  override readonly name = "ExtractError";
  constructor(code: string, message: string) {
    super("invalid", code, message);
  }
}
