/**
 * The stored namespaces and their tool records: a namespace item
 * (`NS#{name}` under its tenant) and one record per tool of any kind (code and
 * HTTP tools, MCP servers) under `NSTOOL#{ns}#{key}`, so one query lists a
 * namespace's tools and a code and an HTTP tool cannot take the same name.
 * The shapes of the records are the service's (`service/namespaces.ts`,
 * `tools/registry.ts`); this store keeps their keys.
 */
import type { Item, ItemStore } from "../ports/item-store";
import {
  NAMESPACE_PREFIX,
  namespaceKey,
  namespaceToolKey,
  namespaceToolPrefix,
  tenantPk,
} from "./keys";

/** The attributes of a stored record, without its key. */
export type Attributes = Record<string, unknown>;

export class NamespaceStore {
  constructor(private readonly items: ItemStore) {}

  async getNamespace(tenant: string, name: string): Promise<Item | null> {
    return this.items.get(namespaceKey(tenant, name));
  }

  /** Writes (or replaces) a namespace's item. */
  async putNamespace(tenant: string, name: string, record: Attributes): Promise<void> {
    await this.items.put({ ...namespaceKey(tenant, name), ...record });
  }

  /** The names of the tenant's stored namespaces (at most 1000). */
  async listNamespaceNames(tenant: string): Promise<string[]> {
    const prefix = NAMESPACE_PREFIX;
    const page = await this.items.query({ pk: tenantPk(tenant), prefix, limit: 1000 });
    return page.items.map((item) => item.sk.slice(prefix.length));
  }

  /** Deletes a namespace's item and the tool records given (by their `sk`). */
  async deleteNamespace(tenant: string, name: string, toolSks: string[]): Promise<void> {
    await this.items.deleteMany([
      namespaceKey(tenant, name),
      ...toolSks.map((sk) => ({ pk: tenantPk(tenant), sk })),
    ]);
  }

  /** Every tool record of the namespace, of every kind, from one query (at most 1000). */
  async listToolRecords(tenant: string, ns: string): Promise<Item[]> {
    const prefix = namespaceToolPrefix(ns);
    return (await this.items.query({ pk: tenantPk(tenant), prefix, limit: 1000 })).items;
  }

  /** One tool record by its key in the namespace (a tool's name, or `mcp:{server}`). */
  async getToolRecord(tenant: string, ns: string, key: string): Promise<Item | null> {
    return this.items.get(namespaceToolKey(tenant, ns, key));
  }

  /** Writes a tool record; `create`: only if the key is free (`ConflictError` otherwise). */
  async putToolRecord(
    tenant: string,
    ns: string,
    key: string,
    record: Attributes,
    create: boolean,
  ): Promise<void> {
    const item = { ...namespaceToolKey(tenant, ns, key), ...record };
    await this.items.put(item, create ? { exists: false } : {});
  }

  async deleteToolRecord(tenant: string, ns: string, key: string): Promise<void> {
    await this.items.delete(namespaceToolKey(tenant, ns, key));
  }
}
