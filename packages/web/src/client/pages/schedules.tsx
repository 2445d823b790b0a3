/** @jsxImportSource hono/jsx/dom */
/**
 * Schedules: a cron that starts a task at each due time. Lists them, creates
 * one, pauses or resumes it, and deletes it.
 */
import type { Schedule } from "@stackvm/core";
import { useState } from "hono/jsx/dom";
import { ApiError, seg } from "../api";
import { oneLine, when } from "../format";
import { ActionResult, ConfirmButton, ErrorBox, useAction, useApi, useLoad } from "../ui";

export function SchedulesPage() {
  const api = useApi();
  const list = useLoad(() => api.get<{ schedules: Schedule[] }>("/v1/schedules"), []);
  const create = useAction();
  const change = useAction();
  const [form, setForm] = useState({
    name: "",
    cron: "0 9 * * 1-5",
    timezone: "UTC",
    goal: "",
    namespace: "default",
  });
  const field = (key: keyof typeof form) => (e: Event) =>
    setForm({ ...form, [key]: (e.target as HTMLInputElement).value });

  const submit = (event: Event) => {
    event.preventDefault();
    void create.run(async () => {
      if (!form.name.trim() || !form.goal.trim()) {
        throw new ApiError(0, "missing", "Give the schedule a name and a goal.");
      }
      if (form.cron.trim().split(/\s+/).length !== 5) {
        throw new ApiError(
          0,
          "bad_cron",
          "A cron has 5 fields: minute hour day-of-month month day-of-week, e.g. 0 9 * * 1-5.",
        );
      }
      const made = await api.post<Schedule>("/v1/schedules", {
        ...form,
        cron: form.cron.trim(),
        enabled: true,
      });
      list.reload();
      return (
        <>
          Created schedule <strong>{made.name}</strong>
          {made.next_run_at ? `; it first runs ${when(made.next_run_at)}` : ""}.
        </>
      );
    });
  };

  return (
    <section aria-labelledby="sch-title">
      <div class="page-head">
        <h1 id="sch-title">Schedules</h1>
      </div>
      <ErrorBox error={list.error} title="Could not list the schedules" />
      <ActionResult action={change} title="The schedule was not changed" />
      {list.data?.schedules.length === 0 ? <p class="card empty">No schedules yet.</p> : null}
      <div class="table-wrap" hidden={!list.data?.schedules.length}>
        <table>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">When</th>
              <th scope="col">Goal</th>
              <th scope="col">Next run</th>
              <th scope="col">
                <span class="sr-only">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {(list.data?.schedules ?? []).map((s) => (
              <tr data-schedule={s.schedule_id}>
                <td>
                  <strong>{s.name}</strong>
                  {s.enabled ? null : <span class="badge">paused</span>}
                </td>
                <td>
                  <code>{s.cron}</code> {s.timezone}
                </td>
                <td>{s.goal ? oneLine(s.goal, 80) : <em>a plan</em>}</td>
                <td>{s.enabled && s.next_run_at ? when(s.next_run_at) : "—"}</td>
                <td>
                  <div class="row">
                    <button
                      type="button"
                      disabled={change.pending}
                      onClick={() =>
                        change.run(async () => {
                          await api.patch(`/v1/schedules/${seg(s.schedule_id)}`, {
                            enabled: !s.enabled,
                          });
                          list.reload();
                          return `${s.enabled ? "Paused" : "Resumed"} schedule ${s.name}.`;
                        })
                      }
                    >
                      {s.enabled ? "Pause" : "Resume"}
                    </button>
                    <ConfirmButton
                      label="Delete"
                      question={`Delete schedule ${s.name}?`}
                      confirmLabel="Yes, delete"
                      onConfirm={() =>
                        change.run(async () => {
                          await api.delete(`/v1/schedules/${seg(s.schedule_id)}`);
                          list.reload();
                          return `Deleted schedule ${s.name}.`;
                        })
                      }
                    />
                  </div>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <form class="card form" onSubmit={submit} aria-labelledby="sch-form-title">
        <h2 id="sch-form-title">New schedule</h2>
        <div class="grid-3">
          <div>
            <label for="sch-name">Name</label>
            <input id="sch-name" value={form.name} onInput={field("name")} />
          </div>
          <div>
            <label for="sch-cron">Cron (5 fields)</label>
            <input id="sch-cron" class="code" value={form.cron} onInput={field("cron")} />
          </div>
          <div>
            <label for="sch-tz">Time zone (IANA)</label>
            <input id="sch-tz" value={form.timezone} onInput={field("timezone")} />
          </div>
        </div>
        <label for="sch-goal">Goal</label>
        <textarea id="sch-goal" rows={2} value={form.goal} onInput={field("goal")} />
        <label for="sch-ns">Namespace</label>
        <input id="sch-ns" value={form.namespace} onInput={field("namespace")} />
        <div class="actions">
          <button type="submit" class="primary" disabled={create.pending}>
            Create schedule
          </button>
        </div>
        <ActionResult action={create} title="The schedule was not created" />
      </form>
    </section>
  );
}
