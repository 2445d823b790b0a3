/**
 * The sandbox: the function that runs generated code (`run_code`, `code_task`).
 *
 * It is the outermost layer of the isolation described in DESIGN.md, so it is
 * given nothing it could leak or misuse:
 * - no links, no permissions, no environment: its role holds only the two
 *   AWS-managed service policies Lambda itself needs (writing its logs, and the
 *   network interfaces of a VPC function), and its environment is emptied,
 *   which also removes SST's app-wide `SST_KEY` (the key that decrypts every
 *   function's links) and `SST_RESOURCE_App`;
 * - no network: it runs in a VPC that has no internet gateway, no NAT and no
 *   endpoints, in subnets whose only route is the VPC's own range, behind a
 *   security group with no rules at all; the VPC's default security group is
 *   emptied too. Without a route, even the role's credentials reach nothing;
 * - `dev: false`, so `sst dev` never runs it on a laptop;
 * - only the worker may invoke it: the worker's link is the one grant of
 *   `lambda:InvokeFunction` on it, and it has no resource policy.
 *
 * The worker, not the sandbox, stores what comes back in S3. The runner's
 * worker and child scripts are packaged by `sandbox-scripts.ts`.
 */
import { bundleSandboxScripts, sandboxInstalls } from "./sandbox-scripts";

const zones = aws.getAvailabilityZonesOutput({ state: "available" }).names;

/** A private network with no way out. */
export const sandboxVpc = new aws.ec2.Vpc("SandboxVpc", {
  cidrBlock: "10.42.0.0/16",
  enableDnsSupport: true,
  enableDnsHostnames: false,
  tags: { Name: `${$app.name}-${$app.stage}-sandbox` },
});

// The VPC's default group allows everything between its members; nothing uses
// it, and managing it with no rules takes those away.
new aws.ec2.DefaultSecurityGroup("SandboxVpcDefaultGroup", {
  vpcId: sandboxVpc.id,
  ingress: [],
  egress: [],
});

/** Two subnets in two zones (Lambda asks for more than one), with only the local route. */
export const sandboxSubnets = [0, 1].map(
  (i) =>
    new aws.ec2.Subnet(`SandboxSubnet${i + 1}`, {
      vpcId: sandboxVpc.id,
      cidrBlock: `10.42.${i}.0/24`,
      availabilityZone: zones.apply((names) => names[i % names.length] ?? ""),
      mapPublicIpOnLaunch: false,
      tags: { Name: `${$app.name}-${$app.stage}-sandbox-${i + 1}` },
    }),
);

/** No ingress, no egress: the explicit empty lists also remove AWS's default allow-all egress. */
export const sandboxSecurityGroup = new aws.ec2.SecurityGroup("SandboxSecurityGroup", {
  vpcId: sandboxVpc.id,
  description: "StackVM sandbox: no traffic in or out",
  ingress: [],
  egress: [],
});

/** The locked-down code runner. */
export const sandbox = new sst.aws.Function("Sandbox", {
  handler: "packages/functions/src/sandbox.handler",
  dev: false,
  // Pyodide and QuickJS load their WebAssembly and (Pyodide) its Python
  // standard library from their package folders, which a bundle cannot inline.
  nodejs: { install: sandboxInstalls },
  // The runner's worker and child scripts, bundled next to the handler.
  hook: { postbuild: async (dir) => void (await bundleSandboxScripts(dir, $cli.paths.root)) },
  memory: "2048 MB",
  timeout: "60 seconds",
  link: [],
  permissions: [],
  vpc: {
    privateSubnets: sandboxSubnets.map((subnet) => subnet.id),
    securityGroups: [sandboxSecurityGroup.id],
  },
  transform: {
    function: (args) => {
      // SST always adds SST_KEY, SST_KEY_FILE and SST_RESOURCE_App; the
      // sandbox gets no environment at all.
      args.environment = undefined;
      return undefined;
    },
  },
});
