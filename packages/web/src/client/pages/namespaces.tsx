/** @jsxImportSource hono/jsx/dom */
/**
 * Namespaces: which tools and hosts a task may use. Lists them, and creates or
 * replaces one (`PUT /v1/namespaces/{name}`, keeping the settings the form does
 * not show) or deletes it.
 */
import type { Namespace } from "@stackvm/core";
import { useState } from "hono/jsx/dom";
import { ApiError, seg } from "../api";
import { namespaceBody } from "../namespace-body";
import { PlanningOptions } from "../planning-options";
import { ActionResult, ConfirmButton, ErrorBox, useAction, useApi, useLoad } from "../ui";

interface ToolInfo {
  name: string;
  description: string;
  source?: "builtin" | "code" | "http" | "mcp";
}

/** A namespace's tools grouped by source: built-in, code tools, each MCP server, HTTP tools. */
export function toolGroups(
  tools: ToolInfo[],
): Array<{ key: string; title: string; tools: ToolInfo[] }> {
  const source = (tool: ToolInfo) => tool.source ?? "builtin";
  const servers = [
    ...new Set(tools.filter((t) => source(t) === "mcp").map((t) => t.name.split(".")[0]!)),
  ].sort();
  return [
    { key: "builtin", title: "Built-in", tools: tools.filter((t) => source(t) === "builtin") },
    { key: "code", title: "Code tools", tools: tools.filter((t) => source(t) === "code") },
    ...servers.map((server) => ({
      key: `mcp:${server}`,
      title: `MCP server ${server}`,
      tools: tools.filter((t) => source(t) === "mcp" && t.name.startsWith(`${server}.`)),
    })),
    { key: "http", title: "HTTP tools", tools: tools.filter((t) => source(t) === "http") },
  ].filter((group) => group.tools.length > 0);
}

/** Every tool the namespace can call (`GET /v1/tools?namespace=`), grouped by source. */
function ToolsBySource(props: { namespace: string }) {
  const api = useApi();
  const tools = useLoad(
    () => api.get<{ tools: ToolInfo[] }>(`/v1/tools?namespace=${seg(props.namespace)}`),
    [props.namespace],
  );
  if (tools.error) return <ErrorBox error={tools.error} title="Could not load the tools" />;
  return (
    <div class="tool-sources">
      {toolGroups(tools.data?.tools ?? []).map((group) => (
        <div data-source={group.key}>
          <strong class="small">{group.title}</strong>
          <ul>
            {group.tools.map((tool) => (
              <li title={tool.description}>
                <code>{tool.name}</code>
              </li>
            ))}
          </ul>
        </div>
      ))}
    </div>
  );
}

function NamespaceForm(props: {
  tools: ToolInfo[];
  editing: Namespace | null;
  onSaved: () => void;
}) {
  const api = useApi();
  const save = useAction();
  const [name, setName] = useState(props.editing?.name ?? "");
  const [description, setDescription] = useState(props.editing?.description ?? "");
  const [tools, setTools] = useState<string[]>(props.editing?.allowed_tools ?? []);
  const [hosts, setHosts] = useState((props.editing?.allowed_hosts ?? []).join("\n"));
  const [instructions, setInstructions] = useState(props.editing?.planner_instructions ?? "");
  const [planning, setPlanning] = useState<"up_front" | "adaptive">(
    props.editing?.planning ?? "up_front",
  );

  const submit = (event: Event) => {
    event.preventDefault();
    void save.run(async () => {
      if (!/^[a-z0-9_-]{1,64}$/.test(name)) {
        throw new ApiError(0, "bad_name", "A namespace name is 1 to 64 of a-z, 0-9, _ and -.");
      }
      // Read again at save time: another client may have changed what the form does not show.
      const current = props.editing
        ? await api.get<Namespace>(`/v1/namespaces/${seg(name)}`)
        : null;
      const body = namespaceBody(current, {
        description,
        allowed_tools: tools,
        allowed_hosts: hosts.split(/[\s,]+/).filter(Boolean),
        planner_instructions: instructions,
        planning,
      });
      await api.put(`/v1/namespaces/${seg(name)}`, body);
      props.onSaved();
      return (
        <>
          Saved namespace <strong>{name}</strong>.
        </>
      );
    });
  };

  return (
    <form class="card form" onSubmit={submit} aria-labelledby="ns-form-title">
      <h2 id="ns-form-title">{props.editing ? `Edit ${props.editing.name}` : "New namespace"}</h2>
      <label for="ns-name">Name</label>
      <input
        id="ns-name"
        value={name}
        readonly={props.editing !== null}
        onInput={(e: Event) => setName((e.target as HTMLInputElement).value)}
      />
      <label for="ns-description">Description</label>
      <input
        id="ns-description"
        value={description}
        onInput={(e: Event) => setDescription((e.target as HTMLInputElement).value)}
      />
      <fieldset>
        <legend>Allowed tools</legend>
        {props.tools.map((tool) => (
          <label class="check" title={tool.description}>
            <input
              type="checkbox"
              checked={tools.includes(tool.name)}
              onChange={(e: Event) =>
                setTools(
                  (e.target as HTMLInputElement).checked
                    ? [...tools, tool.name]
                    : tools.filter((t) => t !== tool.name),
                )
              }
            />
            <code>{tool.name}</code>
          </label>
        ))}
      </fieldset>
      <label for="ns-hosts">
        Allowed hosts (one per line, e.g. api.example.com or *.example.com)
      </label>
      <textarea
        id="ns-hosts"
        rows={3}
        value={hosts}
        onInput={(e: Event) => setHosts((e.target as HTMLTextAreaElement).value)}
      />
      <label for="ns-planner-instructions">
        Planner instructions (added to every plan prompt of its tasks; at most 4,000 characters)
      </label>
      <textarea
        id="ns-planner-instructions"
        rows={4}
        maxLength={4000}
        value={instructions}
        onInput={(e: Event) => setInstructions((e.target as HTMLTextAreaElement).value)}
      />
      <label for="ns-planning">Planning (a task may choose otherwise)</label>
      <select
        id="ns-planning"
        value={planning}
        onChange={(e: Event) =>
          setPlanning((e.target as HTMLSelectElement).value as "up_front" | "adaptive")
        }
      >
        <PlanningOptions selected={planning} />
      </select>
      <div class="actions">
        <button type="submit" class="primary" disabled={save.pending}>
          Save namespace
        </button>
      </div>
      <ActionResult action={save} title="The namespace was not saved" />
    </form>
  );
}

export function NamespacesPage() {
  const api = useApi();
  const list = useLoad(() => api.get<{ namespaces: Namespace[] }>("/v1/namespaces"), []);
  const tools = useLoad(() => api.get<{ tools: ToolInfo[] }>("/v1/tools"), []);
  const [editing, setEditing] = useState<Namespace | null>(null);
  const [formKey, setFormKey] = useState(0);
  const remove = useAction();

  return (
    <section aria-labelledby="ns-title">
      <div class="page-head">
        <h1 id="ns-title">Namespaces</h1>
        <button
          type="button"
          onClick={() => {
            setEditing(null);
            setFormKey(formKey + 1);
          }}
        >
          New namespace
        </button>
      </div>
      <p class="muted">
        A task runs in one namespace and may use only its tools and reach only its hosts. Every
        tenant has <code>default</code>: all built-in tools, no hosts.
      </p>
      <ErrorBox error={list.error} title="Could not load the namespaces" />
      <ActionResult action={remove} title="The namespace was not deleted" />
      <div class="table-wrap">
        <table>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Tools</th>
              <th scope="col">Hosts</th>
              <th scope="col">
                <span class="sr-only">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {(list.data?.namespaces ?? []).map((ns) => (
              <tr data-namespace={ns.name}>
                <td>
                  <strong>{ns.name}</strong>
                  {ns.planning === "adaptive" ? (
                    <div class="muted small" data-planning="adaptive">
                      planned adaptively
                    </div>
                  ) : null}
                  {ns.description ? <div class="muted small">{ns.description}</div> : null}
                </td>
                <td>
                  {[
                    ...ns.allowed_tools,
                    ...ns.code_tools.map((t) => `${t} (code)`),
                    ...(ns.http_tools ?? []).map((t) => `${t} (http)`),
                    ...(ns.mcp_servers ?? []).map((t) => `${t}.* (mcp)`),
                  ].join(", ") || "none"}
                  <details>
                    <summary class="small">Tools by source</summary>
                    <ToolsBySource namespace={ns.name} />
                  </details>
                </td>
                <td>{ns.allowed_hosts.join(", ") || "none"}</td>
                <td>
                  <div class="row">
                    <button
                      type="button"
                      onClick={() => {
                        setEditing(ns);
                        setFormKey(formKey + 1);
                      }}
                    >
                      Edit
                    </button>
                    <ConfirmButton
                      label="Delete"
                      question={`Delete namespace ${ns.name}?`}
                      confirmLabel="Yes, delete"
                      onConfirm={() =>
                        remove.run(async () => {
                          await api.delete(`/v1/namespaces/${seg(ns.name)}`);
                          list.reload();
                          return (
                            <>
                              Deleted namespace <strong>{ns.name}</strong>.
                            </>
                          );
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
      <ErrorBox error={tools.error} title="Could not load the tools" />
      {tools.data ? (
        <div key={formKey}>
          <NamespaceForm tools={tools.data.tools} editing={editing} onSaved={list.reload} />
        </div>
      ) : null}
    </section>
  );
}
