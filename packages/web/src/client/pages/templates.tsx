/** @jsxImportSource hono/jsx/dom */
/**
 * Templates: plans saved from a commit (`POST .../save-plan`), which the
 * planner reuses for similar goals. Lists them, runs one as a new task, and
 * deletes one.
 */
import type { Template } from "@stackvm/core";
import { useState } from "hono/jsx/dom";
import { seg } from "../api";
import { age, oneLine, when } from "../format";
import { PlanView } from "../plan-view";
import { Link, navigate } from "../router";
import { taskPath } from "../routes";
import { ActionResult, ConfirmButton, ErrorBox, useAction, useApi, useLoad } from "../ui";

export function TemplatesPage() {
  const api = useApi();
  const [cursor, setCursor] = useState<string | null>(null);
  const list = useLoad(
    () =>
      api.get<{ templates: Template[]; next_cursor: string | null }>(
        `/v1/templates?limit=50${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`,
      ),
    [cursor],
  );
  const action = useAction();
  const templates = list.data?.templates ?? [];

  return (
    <section aria-labelledby="tpl-title">
      <div class="page-head">
        <h1 id="tpl-title">Templates</h1>
      </div>
      <p class="muted">
        Plans saved from a commit (“Save plan as template” on a task's commit). The planner uses
        them as examples for similar goals.
      </p>
      <ErrorBox error={list.error} title="Could not load the templates" />
      <ActionResult action={action} title="That did not work" />
      {list.data && templates.length === 0 ? (
        <p class="card empty">No templates yet. Save one from a commit of a task.</p>
      ) : null}
      <ul class="cards">
        {templates.map((tpl) => (
          <li class="card" data-template={tpl.template_id}>
            <h2 class="card-title">{oneLine(tpl.goal, 100) || tpl.template_id}</h2>
            <p class="muted small">
              <code>{tpl.template_id}</code>
              {` · namespace ${tpl.namespace} · `}
              <span title={when(tpl.created_at)}>saved {age(tpl.created_at)}</span>
              {` · ${tpl.plan.length} instructions · `}
              <Link href={taskPath(tpl.task_id, tpl.commit_id)}>from this commit</Link>
            </p>
            <details>
              <summary>Plan</summary>
              <PlanView plan={tpl.plan} label={`Plan of template ${tpl.template_id}`} />
            </details>
            <div class="row card-actions">
              <button
                type="button"
                disabled={action.pending}
                onClick={() =>
                  action.run(async () => {
                    const created = await api.post<{ task_id: string }>("/v1/tasks", {
                      plan: tpl.plan,
                      goal: tpl.goal,
                      namespace: tpl.namespace,
                    });
                    navigate(taskPath(created.task_id));
                    return "Started.";
                  })
                }
              >
                Run this plan
              </button>
              <ConfirmButton
                label="Delete"
                question="Delete this template?"
                confirmLabel="Yes, delete"
                onConfirm={() =>
                  action.run(async () => {
                    await api.delete(`/v1/templates/${seg(tpl.template_id)}`);
                    list.reload();
                    return (
                      <>
                        Deleted template <code>{tpl.template_id}</code>.
                      </>
                    );
                  })
                }
              />
            </div>
          </li>
        ))}
      </ul>
      {list.data?.next_cursor ? (
        <button type="button" onClick={() => setCursor(list.data?.next_cursor ?? null)}>
          More →
        </button>
      ) : null}
    </section>
  );
}
