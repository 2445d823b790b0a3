/**
 * The sandbox port: runs generated code in a locked-down function (a Lambda
 * `Invoke` on AWS, a local stand-in that runs the same handler in its own process).
 * The wire protocol is `../sandbox/protocol.ts`.
 */
import type { SandboxRequest, SandboxResponse } from "../sandbox/protocol";

export interface SandboxPort {
  run(request: SandboxRequest): Promise<SandboxResponse>;
}
