/** @jsxImportSource hono/jsx/dom */
/**
 * The console: sign-in, then one page per route. The API client lives here, so
 * that a 401 anywhere (a key revoked while the tab is open) returns to the
 * refused-key screen at once.
 */
import { useMemo, useState } from "hono/jsx/dom";
import { type ApiError, createApi } from "./api";
import { Layout } from "./layout";
import { FilesPage } from "./pages/files";
import { KnowledgePage } from "./pages/knowledge";
import { NamespacesPage } from "./pages/namespaces";
import { NewTaskPage } from "./pages/new-task";
import { SchedulesPage } from "./pages/schedules";
import { SignIn } from "./pages/sign-in";
import { TaskPage } from "./pages/task";
import { TasksPage } from "./pages/tasks";
import { TemplatesPage } from "./pages/templates";
import { TriggersPage } from "./pages/triggers";
import { UsagePage } from "./pages/usage";
import { Link, useLocation } from "./router";
import { parseRoute, type Route } from "./routes";
import { session } from "./session";
import { ApiContext } from "./ui";

function Page(props: { route: Route }) {
  const { route } = props;
  switch (route.page) {
    case "tasks":
      return <TasksPage />;
    case "new-task":
      return <NewTaskPage />;
    case "task":
      return <TaskPage taskId={route.taskId} />;
    case "namespaces":
      return <NamespacesPage />;
    case "templates":
      return <TemplatesPage />;
    case "triggers":
      return <TriggersPage />;
    case "schedules":
      return <SchedulesPage />;
    case "knowledge":
      return <KnowledgePage />;
    case "usage":
      return <UsagePage />;
    case "files":
      return <FilesPage />;
    case "not-found":
      return (
        <section class="card">
          <h1>No such page</h1>
          <p>
            The console has no page at <code>{route.path}</code>.{" "}
            <Link href="/ui">See the tasks</Link>.
          </p>
        </section>
      );
  }
}

export function App() {
  const [key, setKey] = useState(session.get());
  const [refused, setRefused] = useState<ApiError | null>(null);
  const { pathname } = useLocation();
  const api = useMemo(
    () =>
      createApi({
        key: () => session.get(),
        onUnauthorized: (error) => {
          session.clear();
          setRefused(error);
          setKey(null);
        },
      }),
    [],
  );

  if (!key) {
    return (
      <SignIn
        refused={refused}
        onSignedIn={(k) => {
          session.set(k);
          setRefused(null);
          setKey(k);
        }}
      />
    );
  }
  return (
    <ApiContext.Provider value={api}>
      <Layout
        pathname={pathname}
        onSignOut={() => {
          session.clear();
          setKey(null);
        }}
      >
        <Page route={parseRoute(pathname)} />
      </Layout>
    </ApiContext.Provider>
  );
}
