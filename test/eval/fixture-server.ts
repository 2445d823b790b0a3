/**
 * The eval's loopback HTTP server: a small shop API that cases call with
 * `http_request` (`{{fixture_url}}`), so that tool use is scored on data the
 * model cannot know. The stack reaches it only when loopback is opened to it
 * (`STACKVM_OPEN_PRIVATE_RANGES=127.0.0.1`); the in-process stack opens it.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

const ORDERS: Record<string, unknown> = {
  "A-1": {
    id: "A-1",
    status: "shipped",
    items: [
      { sku: "TEA-7", qty: 3, price: 4.5 },
      { sku: "CUP-2", qty: 2, price: 12 },
    ],
  },
  "B-9": { id: "B-9", status: "cancelled", items: [{ sku: "PEN-1", qty: 10, price: 1.25 }] },
};

const ROUTES: Record<string, unknown> = {
  "/rates": { base: "EUR", rates: { USD: 1.08, JPY: 162.4, GBP: 0.85 } },
  "/stock": { "TEA-7": 41, "CUP-2": 0, "PEN-1": 130 },
  "/employees": [
    { name: "Ines", team: "billing", since: 2019 },
    { name: "Tomas", team: "search", since: 2021 },
    { name: "Wen", team: "billing", since: 2016 },
  ],
  // The adaptive cases' data: what the next step must be is only known once these are read.
  "/inventory": {
    warehouses: [
      { name: "north", units: { "CUP-2": 5, "TEA-7": 1 } },
      { name: "south", units: { "CUP-2": 7, "PEN-1": 40 } },
    ],
  },
  "/shipping": { tool: "per_item_fee", since: "2026-03-01" },
  "/log/1": { page: 1, pages: 3, entries: ["INFO start", "ERROR disk full", "INFO retry"] },
  "/log/2": { page: 2, pages: 3, entries: ["ERROR timeout", "INFO ok"] },
  "/log/3": { page: 3, pages: 3, entries: ["ERROR disk full", "ERROR timeout", "INFO stop"] },
};

/** Starts the server on a free loopback port; `url` has no trailing slash. */
export async function startFixtureServer(): Promise<{ url: string; close(): Promise<void> }> {
  const server = createServer((req, res) => {
    const path = (req.url ?? "/").split("?")[0] ?? "/";
    const order = /^\/orders\/([A-Z]-\d+)$/.exec(path)?.[1];
    const body = order !== undefined ? ORDERS[order] : ROUTES[path];
    if (body === undefined) {
      res.writeHead(404, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: `no ${path} here` }));
      return;
    }
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify(body));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
