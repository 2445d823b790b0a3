/**
 * `stackvm keys create|list`: API keys. With `--tenant`, `create` is the
 * operator's command (it needs STACKVM_ADMIN_KEY) and creates the tenant if new.
 */
import type { ApiKeyInfo, NewApiKey } from "@stackvm/core";
import { type Command, JSON_OPTION, printJson } from "../command";
import { EXIT } from "../exit-codes";

export const keyCommands: Command[] = [
  {
    name: "keys create",
    summary:
      "Create an API key: for your tenant, or with --tenant for any tenant (needs STACKVM_ADMIN_KEY).",
    usage: "stackvm keys create [--tenant TENANT] [--name NAME] [--json]",
    options: {
      tenant: { type: "string", description: "the tenant (operator only; created if new)" },
      name: { type: "string", description: "a label for the key (default 'cli')" },
      ...JSON_OPTION,
    },
    args: [],
    async run(ctx, v) {
      const body = { name: v.name ?? "cli" };
      const created = v.tenant
        ? await ctx.client.request<NewApiKey>(
            "POST",
            `/v1/admin/tenants/${encodeURIComponent(String(v.tenant))}/keys`,
            { body, auth: "admin" },
          )
        : await ctx.client.request<NewApiKey>("POST", "/v1/keys", { body });
      if (v.json) return printJson(ctx.out, created);
      ctx.out.line(created.key);
      ctx.err.line(`key ${created.key_id} created; it is shown only once: keep it now`);
      return EXIT.ok;
    },
  },
  {
    name: "keys list",
    summary: "List your tenant's API keys (never the keys themselves).",
    usage: "stackvm keys list [--json]",
    options: { ...JSON_OPTION },
    args: [],
    async run(ctx, v) {
      const body = await ctx.client.request<{ keys: ApiKeyInfo[] }>("GET", "/v1/keys");
      if (v.json) return printJson(ctx.out, body);
      for (const k of body.keys) {
        ctx.out.line(`${k.key_id}  ${k.prefix}…  ${k.created_at.slice(0, 19)}  ${k.name}`);
      }
      return EXIT.ok;
    },
  },
];
