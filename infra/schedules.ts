/**
 * Time-driven work: the tenants' schedules and the sweep of stalled branches.
 *
 * Tenants' schedules are EventBridge Scheduler schedules, one per job, that the
 * API creates in one schedule group; each invokes the scheduler function with
 * `{ tenant_id, schedule_id }` and the due time, through a role that only the
 * Scheduler service can assume and that may only invoke that function and
 * write to the schedules' DLQ. The API may manage schedules in that group and
 * pass that role to the Scheduler service: nothing else.
 *
 * Waiting branches (a `wait` or an `ask_human` timeout more than 15 minutes
 * away, past what the queue can delay) are woken by one-time schedules that the
 * worker creates in a group of their own, through the same role and function
 * (`{"kind": "wake", ...}`); EventBridge deletes each after it fires. The worker
 * may only create schedules in that group and pass that role: it cannot touch
 * the tenants' schedules.
 */
import { queue, workerTimeoutSeconds } from "./queue";
import { llmConfiguredEnvironment } from "./secrets";
import { bucket, table } from "./storage";

/** The group that holds every tenant schedule of this stage. */
export const scheduleGroup = new aws.scheduler.ScheduleGroup("Schedules", {
  name: `${$app.name}-${$app.stage}-schedules`,
});

/** The group of the worker's one-time wakes of waiting branches. */
export const wakeGroup = new aws.scheduler.ScheduleGroup("Wakes", {
  name: `${$app.name}-${$app.stage}-wakes`,
});

/** Starts each due run of a schedule once (it dedupes on schedule and due time). */
export const scheduler = new sst.aws.Function("Scheduler", {
  handler: "packages/functions/src/scheduler.handler",
  timeout: "30 seconds",
  memory: "512 MB",
  // Starting a task writes its inputs, and a large one goes to the bucket.
  link: [table, queue, bucket],
  environment: {
    STACKVM_TABLE: table.name,
    STACKVM_QUEUE_URL: queue.url,
    STACKVM_BUCKET: bucket.name,
    ...llmConfiguredEnvironment,
  },
});

/** Invocations that EventBridge Scheduler gave up on, kept 14 days for inspection. */
export const scheduleDeadLetterQueue = new sst.aws.Queue("SchedulesDlq", {
  transform: {
    queue: (args) => {
      args.messageRetentionSeconds = 14 * 24 * 60 * 60;
      return undefined;
    },
  },
});

const account = aws.getCallerIdentityOutput({}).accountId;

/** The role EventBridge Scheduler assumes to invoke the scheduler function. */
export const schedulerInvokeRole = new aws.iam.Role("SchedulesInvokeRole", {
  assumeRolePolicy: $jsonStringify({
    Version: "2012-10-17",
    Statement: [
      {
        Effect: "Allow",
        Principal: { Service: "scheduler.amazonaws.com" },
        Action: "sts:AssumeRole",
        // Only this account's schedules may use it (confused deputy).
        Condition: { StringEquals: { "aws:SourceAccount": account } },
      },
    ],
  }),
  inlinePolicies: [
    {
      name: "invoke-scheduler",
      policy: $jsonStringify({
        Version: "2012-10-17",
        Statement: [
          { Effect: "Allow", Action: "lambda:InvokeFunction", Resource: scheduler.arn },
          { Effect: "Allow", Action: "sqs:SendMessage", Resource: scheduleDeadLetterQueue.arn },
        ],
      }),
    },
  ],
});

/** ARN pattern of the schedules in a group: `...:schedule/{group}/*`. */
const schedulesIn = (group: aws.scheduler.ScheduleGroup) =>
  group.arn.apply((arn) => `${arn.replace(":schedule-group/", ":schedule/")}/*`);

/** Passing the schedules' role, to the Scheduler service only. */
const passInvokeRole = {
  actions: ["iam:PassRole"],
  resources: [schedulerInvokeRole.arn],
  conditions: [
    {
      test: "StringEquals",
      variable: "iam:PassedToService",
      values: ["scheduler.amazonaws.com"],
    },
  ],
};

/** What the API needs to manage the tenants' schedules, and only that. */
export const scheduleManagementPermissions = [
  {
    actions: [
      "scheduler:CreateSchedule",
      "scheduler:UpdateSchedule",
      "scheduler:DeleteSchedule",
      "scheduler:GetSchedule",
    ],
    resources: [schedulesIn(scheduleGroup)],
  },
  passInvokeRole,
];

/**
 * What the worker needs to arm a wake, and only that: create a one-time
 * schedule in the wakes' group (a wake armed twice is a conflict it ignores;
 * EventBridge deletes the schedule after it fires, so no delete).
 */
export const wakePermissions = [
  { actions: ["scheduler:CreateSchedule"], resources: [schedulesIn(wakeGroup)] },
  passInvokeRole,
];

/** The environment the API reads to create schedules. */
export const scheduleEnvironment = {
  STACKVM_SCHEDULE_GROUP: scheduleGroup.name,
  STACKVM_SCHEDULER_ROLE_ARN: schedulerInvokeRole.arn,
  STACKVM_SCHEDULER_FUNCTION_ARN: scheduler.arn,
  STACKVM_SCHEDULE_DLQ_ARN: scheduleDeadLetterQueue.arn,
};

/** The environment the worker reads to arm wakes. */
export const wakeEnvironment = {
  STACKVM_WAKE_GROUP: wakeGroup.name,
  STACKVM_SCHEDULER_ROLE_ARN: schedulerInvokeRole.arn,
  STACKVM_SCHEDULER_FUNCTION_ARN: scheduler.arn,
  STACKVM_SCHEDULE_DLQ_ARN: scheduleDeadLetterQueue.arn,
};

/**
 * A running branch that has not moved for two step timeouts has no step in
 * flight (a step ends within one, then enqueues the next): the sweep re-enqueues
 * it, which costs one read if the step was not lost after all. From the worker's
 * timeout, not a fixed 20 minutes, so that a lost step is found in minutes.
 */
export const stalledAfterSeconds = 2 * workerTimeoutSeconds;

/** How often stalled branches are looked for: every step timeout. */
export const sweepSchedule: `rate(${string})` = `rate(${Math.ceil(workerTimeoutSeconds / 60)} minutes)`;

/** Re-enqueues branches that are `running` but have not moved for longer than the step timeout. */
export const sweep = new sst.aws.CronV2("Sweep", {
  schedule: sweepSchedule,
  function: {
    handler: "packages/functions/src/sweep.handler",
    timeout: "60 seconds",
    memory: "512 MB",
    // The bucket only because every entry file reads the same configuration.
    link: [table, queue, bucket],
    environment: {
      STACKVM_TABLE: table.name,
      STACKVM_QUEUE_URL: queue.url,
      STACKVM_BUCKET: bucket.name,
      STACKVM_STALLED_AFTER_SECONDS: String(stalledAfterSeconds),
    },
  },
});
