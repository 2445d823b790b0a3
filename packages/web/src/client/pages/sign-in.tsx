/** @jsxImportSource hono/jsx/dom */
/**
 * Sign-in with an API key. The key is checked against the API before it is
 * kept, and a refused key (wrong, or revoked since) gets a screen of its own
 * that says so and what to do, not a console full of failing requests.
 */
import { useState } from "hono/jsx/dom";
import { type ApiError, createApi } from "../api";
import { ErrorBox } from "../ui";

export function SignIn(props: { refused: ApiError | null; onSignedIn: (key: string) => void }) {
  const [key, setKey] = useState("");
  const [pending, setPending] = useState(false);
  const [refused, setRefused] = useState<ApiError | null>(props.refused);
  const [error, setError] = useState<ApiError | null>(null);

  const submit = async (event: Event) => {
    event.preventDefault();
    const candidate = key.trim();
    if (!candidate) {
      setError(null);
      return;
    }
    setPending(true);
    setError(null);
    try {
      await createApi({ key: () => candidate }).get("/v1/tasks?limit=1");
      props.onSignedIn(candidate);
    } catch (e) {
      const failure = e as ApiError;
      if (failure.status === 401) setRefused(failure);
      else setError(failure);
    } finally {
      setPending(false);
    }
  };

  if (refused) {
    return (
      <main class="sign-in" id="main">
        <section class="card refused" role="alert" aria-labelledby="refused-title">
          <h1 id="refused-title">This API key was refused</h1>
          <p>
            The service answered <strong>401 Unauthorized</strong>: {refused.message}
          </p>
          <p>The key is mistyped, or it was revoked. Nothing was shown or changed with it.</p>
          <ul>
            <li>
              Running locally, <code>npm start</code> prints the key of tenant <code>local</code>{" "}
              and keeps it in <code>.stackvm/api-key</code>.
            </li>
            <li>
              Anyone signed in can make a new key with <code>POST /v1/keys</code>; an operator with{" "}
              <code>POST /v1/admin/tenants/&#123;tenant&#125;/keys</code>.
            </li>
          </ul>
          <button
            type="button"
            class="primary"
            onClick={() => {
              setRefused(null);
              setKey("");
            }}
          >
            Try another key
          </button>
        </section>
      </main>
    );
  }

  return (
    <main class="sign-in" id="main">
      <form class="card" onSubmit={submit} aria-labelledby="sign-in-title">
        <h1 id="sign-in-title">StackVM console</h1>
        <p class="muted">
          Sign in with an API key. It stays in this browser tab only (session storage) and goes to
          the API as the bearer header.
        </p>
        <label for="api-key">API key</label>
        <input
          id="api-key"
          name="api-key"
          type="password"
          autocomplete="off"
          spellcheck={false}
          placeholder="svm_…"
          value={key}
          onInput={(e: Event) => setKey((e.target as HTMLInputElement).value)}
          required
        />
        <button type="submit" class="primary" disabled={pending}>
          {pending ? "Checking…" : "Sign in"}
        </button>
        <ErrorBox error={error} title="Could not check the key" />
      </form>
    </main>
  );
}
