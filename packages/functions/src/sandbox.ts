// placeholder: replaced by the entry file of its issue
/** Lambda entry of the sandbox function. A placeholder so that infra can name it; it fails if invoked. */
export const handler = async (): Promise<never> => {
  throw new Error(
    "packages/functions/src/sandbox.ts is a placeholder: its entry file is not written yet",
  );
};
