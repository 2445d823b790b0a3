/** @jsxImportSource hono/jsx/dom */
/**
 * Navigation without reloading: the current location as a hook, `navigate`,
 * query edits and `<Link>`. The routes themselves are in `routes.ts`.
 */
import type { Child } from "hono/jsx/dom";
import { useSyncExternalStore } from "hono/jsx/dom";

const listeners = new Set<() => void>();
const notify = () => {
  for (const listener of listeners) listener();
};
window.addEventListener("popstate", notify);

const subscribe = (listener: () => void) => {
  listeners.add(listener);
  return () => listeners.delete(listener);
};

/** The current path and query; re-renders on navigation. */
export function useLocation(): { pathname: string; search: URLSearchParams } {
  const href = useSyncExternalStore(subscribe, () => location.pathname + location.search);
  const url = new URL(href, location.origin);
  return { pathname: url.pathname, search: url.searchParams };
}

/** Goes to a console path; `replace` edits the current history entry (filters, selections). */
export function navigate(to: string, options: { replace?: boolean } = {}): void {
  if (to === location.pathname + location.search) return;
  if (options.replace) history.replaceState(null, "", to);
  else history.pushState(null, "", to);
  notify();
  if (!options.replace) window.scrollTo(0, 0);
}

/** Sets or removes query parameters of the current page, without a new history entry. */
export function setQuery(values: Record<string, string | null>): void {
  const params = new URLSearchParams(location.search);
  for (const [name, value] of Object.entries(values)) {
    if (value === null || value === "") params.delete(name);
    else params.set(name, value);
  }
  const query = params.toString();
  navigate(`${location.pathname}${query ? `?${query}` : ""}`, { replace: true });
}

/** An anchor that navigates in place; a modified click (new tab) keeps the browser's behaviour. */
export function Link(props: {
  href: string;
  class?: string;
  children?: Child;
  title?: string;
  current?: boolean;
}) {
  const onClick = (event: MouseEvent) => {
    if (event.defaultPrevented || event.button !== 0) return;
    if (event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
    event.preventDefault();
    navigate(props.href);
  };
  return (
    <a
      href={props.href}
      class={props.class}
      title={props.title}
      aria-current={props.current ? "page" : undefined}
      onClick={onClick}
    >
      {props.children}
    </a>
  );
}
