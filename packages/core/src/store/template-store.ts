/**
 * The stored plan templates: `TEMPLATE#{id}` under the tenant, one per
 * namespace and normalized goal (the id is derived from both).
 */

import type { ItemStore } from "../ports/item-store";
import { TEMPLATE_PREFIX, templateKey, tenantPk } from "./keys";
import { queryPages } from "./query-all";
import type { Page } from "./task-store";

export interface TemplateRecord {
  template_id: string;
  namespace: string;
  goal: string;
  normalized_goal: string;
  /** The plan as saved (`plan/schema.ts`'s `Plan`; the store does not read it). */
  plan: unknown[];
  task_id: string;
  commit_id: string;
  created_at: string;
}

export class TemplateStore {
  constructor(private readonly items: ItemStore) {}

  /** Writes (or replaces) the tenant's template. */
  async put(tenant: string, record: TemplateRecord): Promise<void> {
    await this.items.put({ ...templateKey(tenant, record.template_id), ...record });
  }

  async get(tenant: string, id: string): Promise<TemplateRecord | null> {
    return (await this.items.get(templateKey(tenant, id))) as unknown as TemplateRecord | null;
  }

  /** One page of the tenant's templates, of one namespace when given. */
  async list(
    tenant: string,
    options: { namespace?: string; limit: number; cursor?: string | null },
  ): Promise<Page<TemplateRecord>> {
    const page = await this.items.query({
      pk: tenantPk(tenant),
      prefix: TEMPLATE_PREFIX,
      limit: options.limit,
      cursor: options.cursor ?? null,
      ...(options.namespace ? { filter: { namespace: options.namespace } } : {}),
    });
    return { items: page.items as unknown as TemplateRecord[], cursor: page.cursor };
  }

  /** The namespace's templates, 100 a page (stop reading when you have seen enough). */
  async *pagesOf(tenant: string, namespace: string): AsyncGenerator<TemplateRecord[]> {
    const query = { pk: tenantPk(tenant), prefix: TEMPLATE_PREFIX, filter: { namespace } };
    for await (const page of queryPages(this.items, { ...query, limit: 100 })) {
      yield page.items as unknown as TemplateRecord[];
    }
  }

  async delete(tenant: string, id: string): Promise<void> {
    await this.items.delete(templateKey(tenant, id));
  }
}
