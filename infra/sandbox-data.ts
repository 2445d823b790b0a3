/**
 * The data sandbox: the second sandbox function, `SandboxData`, which runs
 * Python that imports numpy, pandas, matplotlib or openpyxl (the data engine).
 * It is a container image of our own (`infra/sandbox-data/Dockerfile`: Debian
 * 12's CPython and libraries, Node, the runner): those packages take far more
 * than the 250 MB a zip function may unpack to, and they are x86_64 builds.
 *
 * It is given what the sandbox is given (`sandbox.ts`), and nothing more:
 * - no permissions: its role trusts only Lambda and holds only the two
 *   AWS-managed policies Lambda needs to write its logs and join the VPC;
 * - no network: the sandbox's VPC, subnets and security group with no rules,
 *   which have no route out;
 * - no environment at all (the image's own entry sets what it needs);
 * - not run by `sst dev` (it is not an SST function; a deploy builds it);
 * - only the worker may invoke it: the worker's link to `sandboxData` is the
 *   one grant of `lambda:InvokeFunction` on it, and it has no resource policy.
 *
 * Its runner serves one run per instance and exits (packages/functions/src/
 * sandbox-data.ts), so a warm instance never serves a second tenant. The image
 * is built and pushed at deploy time by the docker-build provider (SST ships it
 * in its platform and uses it for its own container functions), so a deploy
 * needs Docker; nothing else does.
 */
import { join } from "node:path";
import { lambdaOnlyTrust } from "./function-defaults";
import { sandboxSecurityGroup, sandboxSubnets } from "./sandbox";
import { buildDataImageContext, dataDockerfile } from "./sandbox-data-image";

/** The function's settings, checked by the infra test against Lambda's bounds. */
export const sandboxDataSettings = {
  architecture: "x86_64",
  memoryMb: 2048,
  timeoutSeconds: 60,
} as const;

/** The part of `@pulumi/docker-build`'s Image this module uses. */
type ImageClass = new (
  name: string,
  args: Record<string, unknown>,
) => { ref: $util.Output<string> };

// SST's platform installs the docker-build SDK beside its own components; it is
// loaded from there, as SST's container functions load it.
const { Image } = (await import(
  join($cli.paths.platform, "node_modules", "@pulumi", "docker-build", "index.js")
)) as { Image: ImageClass };

/** Where the image is pushed; emptied with the stage outside prod. */
const repository = new aws.ecr.Repository("SandboxDataRepository", {
  forceDelete: $app.stage !== "prod",
  imageScanningConfiguration: { scanOnPush: true },
});

new aws.ecr.LifecyclePolicy("SandboxDataRepositoryLifecycle", {
  repository: repository.name,
  policy: JSON.stringify({
    rules: [
      {
        rulePriority: 1,
        description: "keep the last five images",
        selection: { tagStatus: "any", countType: "imageCountMoreThan", countNumber: 5 },
        action: { type: "expire" },
      },
    ],
  }),
});

const token = aws.ecr.getAuthorizationTokenOutput({ registryId: repository.registryId });

/** The image, built for x86_64 from the repository's Dockerfile and the bundled runner. */
const image = new Image("SandboxDataImage", {
  context: {
    location: $output(
      buildDataImageContext(join($cli.paths.work, "sandbox-data-image"), $cli.paths.root).then(() =>
        join($cli.paths.work, "sandbox-data-image"),
      ),
    ),
  },
  dockerfile: { location: join($cli.paths.root, dataDockerfile) },
  platforms: ["linux/amd64"],
  push: true,
  tags: [$interpolate`${repository.repositoryUrl}:latest`],
  registries: [
    {
      address: repository.repositoryUrl,
      username: token.userName,
      password: $util.secret(token.password),
    },
  ],
});

const role = new aws.iam.Role("SandboxDataRole", {
  assumeRolePolicy: lambdaOnlyTrust,
  managedPolicyArns: [
    "arn:aws:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole",
    "arn:aws:iam::aws:policy/service-role/AWSLambdaVPCAccessExecutionRole",
  ],
});

const functionName = `${$app.name}-${$app.stage}-SandboxData`;

// Its logs expire, as the SST functions' do.
const logGroup = new aws.cloudwatch.LogGroup("SandboxDataLogGroup", {
  name: `/aws/lambda/${functionName}`,
  retentionInDays: 30,
});

/** The data sandbox function. */
export const sandboxDataFunction = new aws.lambda.Function(
  "SandboxDataFunction",
  {
    name: functionName,
    packageType: "Image",
    imageUri: image.ref,
    architectures: [sandboxDataSettings.architecture],
    memorySize: sandboxDataSettings.memoryMb,
    timeout: sandboxDataSettings.timeoutSeconds,
    role: role.arn,
    vpcConfig: {
      subnetIds: sandboxSubnets.map((subnet) => subnet.id),
      securityGroupIds: [sandboxSecurityGroup.id],
    },
    loggingConfig: { logFormat: "Text", logGroup: logGroup.name },
  },
  { dependsOn: [logGroup] },
);

/** What the worker links: the function's name, and the right to invoke it. */
export const sandboxData = new sst.Linkable("SandboxData", {
  properties: { name: sandboxDataFunction.name },
  include: [
    sst.aws.permission({
      actions: ["lambda:InvokeFunction"],
      resources: [sandboxDataFunction.arn],
    }),
  ],
});
