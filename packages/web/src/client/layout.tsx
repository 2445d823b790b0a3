/** @jsxImportSource hono/jsx/dom */
/** The frame of every signed-in page: the navigation bar and the main region. */
import type { Child } from "hono/jsx/dom";
import { Link } from "./router";
import { BASE } from "./routes";

const NAV = [
  { href: BASE, label: "Tasks", match: (p: string) => p === BASE || p.startsWith(`${BASE}/tasks`) },
  { href: `${BASE}/namespaces`, label: "Namespaces" },
  { href: `${BASE}/templates`, label: "Templates" },
  { href: `${BASE}/triggers`, label: "Triggers" },
  { href: `${BASE}/schedules`, label: "Schedules" },
  { href: `${BASE}/knowledge`, label: "Knowledge" },
  { href: `${BASE}/usage`, label: "Usage" },
  { href: `${BASE}/files`, label: "Files" },
];

export function Layout(props: { pathname: string; onSignOut: () => void; children?: Child }) {
  return (
    <>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top">
        <Link href={BASE} class="brand">
          StackVM
        </Link>
        <nav aria-label="Main">
          {NAV.map((item) => {
            const current = item.match
              ? item.match(props.pathname)
              : props.pathname.startsWith(item.href);
            return (
              <Link href={item.href} current={current}>
                {item.label}
              </Link>
            );
          })}
        </nav>
        <button type="button" class="link sign-out" onClick={props.onSignOut}>
          Sign out
        </button>
      </header>
      <main id="main" tabindex={-1}>
        {props.children}
      </main>
    </>
  );
}
