/**
 * Where a task's or a schedule's results may be sent: an https URL, or in local
 * mode also a loopback one (http or https). "Loopback" is the same set of hosts
 * that delivery lets through in local mode (`isLoopbackHost`), so a URL accepted
 * when a task is created is one that delivery will try.
 */
import { ValidationError } from "../errors";
import { isLoopbackHost } from "./host-allow-list";

/**
 * A checker for webhook URLs; `ValidationError` (`bad_webhook_url`) says what is allowed.
 *
 * @example
 * webhookUrlCheck(false)("http://example.com/hook") // throws: webhook_url must be an https URL
 */
export function webhookUrlCheck(localMode: boolean): (url: string) => void {
  return (raw) => {
    const url = new URL(raw);
    const loopback = isLoopbackHost(url.hostname);
    if (url.protocol === "https:" && !loopback) return;
    if (localMode && loopback && (url.protocol === "http:" || url.protocol === "https:")) return;
    throw new ValidationError(
      "bad_webhook_url",
      localMode
        ? "webhook_url must be an https URL, or a loopback URL (http://127.0.0.1:PORT/...) in local mode"
        : "webhook_url must be an https URL",
    );
  };
}
