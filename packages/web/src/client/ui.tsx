/** @jsxImportSource hono/jsx/dom */
/**
 * The console's small shared pieces: status badges, error and notice boxes, an
 * inline confirmation, tabs, and hooks for loading data and running actions so
 * that every action shows its outcome where the user acted.
 */
import type { Child } from "hono/jsx/dom";
import { createContext, useCallback, useContext, useEffect, useRef, useState } from "hono/jsx/dom";
import { type Api, ApiError } from "./api";

/** The API client of the signed-in session. */
export const ApiContext = createContext<Api | null>(null);

export function useApi(): Api {
  const api = useContext(ApiContext);
  if (!api) throw new Error("useApi outside of a signed-in session");
  return api;
}

/** A status value as a coloured badge (text, not colour alone, carries the meaning). */
export function StatusBadge(props: { status: string }) {
  return <span class={`badge status-${props.status}`}>{props.status}</span>;
}

const asApiError = (error: unknown): ApiError =>
  error instanceof ApiError ? error : new ApiError(0, "client_error", (error as Error).message);

/** An error, said plainly, with the API's code for whoever reports it. */
export function ErrorBox(props: { error: unknown; title?: string; children?: Child }) {
  if (!props.error) return null;
  const error = asApiError(props.error);
  return (
    <div class="error-box" role="alert">
      <strong>{props.title ?? "That did not work"}</strong>
      <p>{error.message}</p>
      {error.status ? (
        <p class="muted small">
          HTTP {error.status} · <code>{error.code}</code>
        </p>
      ) : null}
      {props.children}
    </div>
  );
}

/** What an action did, confirmed where the user acted. */
export function Notice(props: { children?: Child }) {
  return (
    <div class="notice" role="status">
      {props.children}
    </div>
  );
}

/** A button that asks once more, in place, before doing something that cannot be undone. */
export function ConfirmButton(props: {
  label: string;
  question: string;
  confirmLabel: string;
  onConfirm: () => void;
  disabled?: boolean;
  class?: string;
}) {
  const [asking, setAsking] = useState(false);
  const yes = useRef<HTMLButtonElement>(null);
  useEffect(() => {
    if (asking) yes.current?.focus();
  }, [asking]);
  if (!asking) {
    return (
      <button
        type="button"
        class={props.class ?? "danger"}
        disabled={props.disabled}
        onClick={() => setAsking(true)}
      >
        {props.label}
      </button>
    );
  }
  return (
    <fieldset class="confirm">
      <legend>{props.question}</legend>
      <button
        type="button"
        class="danger"
        ref={yes}
        onClick={() => {
          setAsking(false);
          props.onConfirm();
        }}
      >
        {props.confirmLabel}
      </button>
      <button type="button" onClick={() => setAsking(false)}>
        Keep
      </button>
    </fieldset>
  );
}

export interface Loaded<T> {
  data: T | undefined;
  error: ApiError | null;
  loading: boolean;
  reload: () => void;
}

/** Loads data when `deps` change; keeps the last data while reloading, so pages do not flash. */
export function useLoad<T>(load: () => Promise<T>, deps: readonly unknown[]): Loaded<T> {
  const [state, setState] = useState<{
    data: T | undefined;
    error: ApiError | null;
    loading: boolean;
  }>({ data: undefined, error: null, loading: true });
  const [nonce, setNonce] = useState(0);
  useEffect(() => {
    let live = true;
    setState((s) => ({ ...s, loading: true }));
    load().then(
      (data) => live && setState({ data, error: null, loading: false }),
      (error: unknown) =>
        live && setState((s) => ({ ...s, error: asApiError(error), loading: false })),
    );
    return () => {
      live = false;
    };
  }, [...deps, nonce]);
  const reload = useCallback(() => setNonce((n) => n + 1), []);
  return { ...state, reload };
}

export interface Action {
  pending: boolean;
  error: ApiError | null;
  notice: Child | null;
  /** Runs `work`; its result (a message) becomes the notice, a throw becomes the error. */
  run: (work: () => Promise<Child>) => Promise<boolean>;
  clear: () => void;
}

/** One action's pending flag, error and confirmation, kept beside its button. */
export function useAction(): Action {
  const [pending, setPending] = useState(false);
  const [error, setError] = useState<ApiError | null>(null);
  const [notice, setNotice] = useState<Child | null>(null);
  const run = useCallback(async (work: () => Promise<Child>) => {
    setPending(true);
    setError(null);
    setNotice(null);
    try {
      setNotice(await work());
      return true;
    } catch (e) {
      setError(asApiError(e));
      return false;
    } finally {
      setPending(false);
    }
  }, []);
  const clear = useCallback(() => {
    setError(null);
    setNotice(null);
  }, []);
  return { pending, error, notice, run, clear };
}

/** The outcome of an action: its notice or its error. */
export function ActionResult(props: { action: Action; title?: string }) {
  const { action } = props;
  return (
    <>
      {action.error ? <ErrorBox error={action.error} title={props.title} /> : null}
      {action.notice ? <Notice>{action.notice}</Notice> : null}
    </>
  );
}

/** Tabs with the ARIA roles, switched by click or by the arrow keys. */
export function Tabs<K extends string>(props: {
  tabs: ReadonlyArray<{ key: K; label: string }>;
  active: K;
  onChange: (key: K) => void;
  label: string;
}) {
  const onKeyDown = (event: KeyboardEvent) => {
    if (event.key !== "ArrowRight" && event.key !== "ArrowLeft") return;
    const i = props.tabs.findIndex((t) => t.key === props.active);
    const next =
      props.tabs[
        (i + (event.key === "ArrowRight" ? 1 : -1) + props.tabs.length) % props.tabs.length
      ];
    if (next) {
      props.onChange(next.key);
      (event.currentTarget as HTMLElement)
        .querySelector<HTMLElement>(`[data-tab="${next.key}"]`)
        ?.focus();
    }
  };
  return (
    <div class="tabs" role="tablist" aria-label={props.label} onKeyDown={onKeyDown}>
      {props.tabs.map((tab) => (
        <button
          type="button"
          role="tab"
          data-tab={tab.key}
          aria-selected={tab.key === props.active ? "true" : "false"}
          tabindex={tab.key === props.active ? 0 : -1}
          onClick={() => props.onChange(tab.key)}
        >
          {tab.label}
        </button>
      ))}
    </div>
  );
}

/** Reads a JSON textarea; says where the JSON breaks when it does not parse. */
export function parseJsonField(text: string, what: string): unknown {
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new ApiError(0, "bad_json", `${what} is not valid JSON: ${(e as Error).message}`);
  }
}
