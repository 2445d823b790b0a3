// biome-ignore-all lint/suspicious/noTemplateCurlyInString: goals write ${payload...} references in plain strings
/** @jsxImportSource hono/jsx/dom */
/**
 * Triggers: signed incoming webhooks that start a task. Creating one shows its
 * URL and secret once (the API keeps no readable copy of the secret).
 */
import type { Trigger } from "@stackvm/core";
import { useState } from "hono/jsx/dom";
import { ApiError, seg } from "../api";
import { age, oneLine, when } from "../format";
import { ActionResult, ConfirmButton, ErrorBox, useAction, useApi, useLoad } from "../ui";

export function TriggersPage() {
  const api = useApi();
  const list = useLoad(
    () => api.get<{ triggers: Array<Trigger & { url: string }> }>("/v1/triggers"),
    [],
  );
  const create = useAction();
  const remove = useAction();
  const [name, setName] = useState("");
  const [goal, setGoal] = useState("");
  const [namespace, setNamespace] = useState("default");

  const submit = (event: Event) => {
    event.preventDefault();
    void create.run(async () => {
      if (!name.trim() || !goal.trim()) {
        throw new ApiError(0, "missing", "Give the trigger a name and a goal.");
      }
      const made = await api.post<{ trigger_id: string; url: string; secret: string }>(
        "/v1/triggers",
        { name: name.trim(), goal: goal.trim(), namespace },
      );
      list.reload();
      return (
        <div class="secret-once">
          <p>
            Created trigger <strong>{name}</strong>. Deliveries go to:
          </p>
          <pre class="json">{made.url}</pre>
          <p>
            Its signing secret, shown <strong>only now</strong> (Standard Webhooks):
          </p>
          <pre class="json">{made.secret}</pre>
        </div>
      );
    });
  };

  return (
    <section aria-labelledby="trg-title">
      <div class="page-head">
        <h1 id="trg-title">Triggers</h1>
      </div>
      <p class="muted">
        A trigger starts a task for every signed webhook delivered to its URL. Its goal may use the
        delivered JSON as <code>{"${payload.field}"}</code>.
      </p>
      <ErrorBox error={list.error} title="Could not list the triggers" />
      <ActionResult action={remove} title="The trigger was not deleted" />
      {list.data?.triggers.length === 0 ? <p class="card empty">No triggers yet.</p> : null}
      <ul class="cards">
        {(list.data?.triggers ?? []).map((t) => (
          <li class="card" data-trigger={t.trigger_id}>
            <h2 class="card-title">{t.name}</h2>
            <p class="muted small">
              <code>{t.trigger_id}</code>
              {t.namespace ? ` · namespace ${t.namespace}` : ""}
              {t.created_at ? <span title={when(t.created_at)}> · {age(t.created_at)}</span> : null}
            </p>
            {t.goal ? <p>{oneLine(t.goal, 200)}</p> : null}
            {t.url ? <pre class="json">{t.url}</pre> : null}
            <ConfirmButton
              label="Delete"
              question={`Delete trigger ${t.name}? Deliveries to its URL will be refused.`}
              confirmLabel="Yes, delete"
              onConfirm={() =>
                remove.run(async () => {
                  await api.delete(`/v1/triggers/${seg(t.trigger_id)}`);
                  list.reload();
                  return (
                    <>
                      Deleted trigger <strong>{t.name}</strong>.
                    </>
                  );
                })
              }
            />
          </li>
        ))}
      </ul>
      <form class="card form" onSubmit={submit} aria-labelledby="trg-form-title">
        <h2 id="trg-form-title">New trigger</h2>
        <label for="trg-name">Name</label>
        <input
          id="trg-name"
          value={name}
          onInput={(e: Event) => setName((e.target as HTMLInputElement).value)}
        />
        <label for="trg-goal">Goal</label>
        <textarea
          id="trg-goal"
          rows={2}
          value={goal}
          placeholder={"Summarize the issue $" + "{payload.issue.title}"}
          onInput={(e: Event) => setGoal((e.target as HTMLTextAreaElement).value)}
        />
        <label for="trg-ns">Namespace</label>
        <input
          id="trg-ns"
          value={namespace}
          onInput={(e: Event) => setNamespace((e.target as HTMLInputElement).value)}
        />
        <div class="actions">
          <button type="submit" class="primary" disabled={create.pending}>
            Create trigger
          </button>
        </div>
        <ActionResult action={create} title="The trigger was not created" />
      </form>
    </section>
  );
}
