// placeholder: replaced by the entry file of its issue
/** Lambda entry of the worker function. A placeholder so that infra can name it; it fails if invoked. */
export const handler = async (): Promise<never> => {
  throw new Error(
    "packages/functions/src/worker.ts is a placeholder: its entry file is not written yet",
  );
};
