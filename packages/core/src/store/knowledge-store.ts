/**
 * The stored knowledge bases and documents: a knowledge base is `KB#{name}`
 * under its tenant; a document is `D#{document_id}` in the partition
 * `T#{tenant}#KB#{name}`, so that one query lists a knowledge base's documents
 * and none crosses tenants. The shapes of the records are knowledge's
 * (`knowledge/records.ts`); this store keeps their keys and reads.
 */
import type { Changes, Condition, Item, ItemStore, QueryPage } from "../ports/item-store";
import {
  DOCUMENT_PREFIX,
  documentKey,
  documentsPk,
  KNOWLEDGE_BASE_PREFIX,
  kbKey,
  tenantPk,
} from "./keys";
import { queryArray } from "./query-all";

export class KnowledgeStore {
  constructor(private readonly items: ItemStore) {}

  /** Writes a new knowledge base; a taken name is a `ConflictError`. */
  async createBase(tenant: string, name: string, record: Record<string, unknown>): Promise<void> {
    await this.items.put({ ...kbKey(tenant, name), ...record }, { exists: false });
  }

  async getBase(tenant: string, name: string): Promise<Item | null> {
    return this.items.get(kbKey(tenant, name));
  }

  /** The tenant's knowledge bases (at most 1000). */
  async listBases(tenant: string): Promise<Item[]> {
    const query = { pk: tenantPk(tenant), prefix: KNOWLEDGE_BASE_PREFIX, limit: 1000 };
    return (await this.items.query(query)).items;
  }

  /** The names of the tenant's knowledge bases (at most 1000). */
  async baseNames(tenant: string): Promise<string[]> {
    const bases = await this.listBases(tenant);
    return bases.map((item) => item.sk.slice(KNOWLEDGE_BASE_PREFIX.length));
  }

  /** Deletes the knowledge base's item, then the items of the documents named. */
  async deleteBase(tenant: string, name: string, documentIds: string[]): Promise<void> {
    await this.items.delete(kbKey(tenant, name));
    await this.items.deleteMany(documentIds.map((id) => documentKey(tenant, name, id)));
  }

  /** One page of the knowledge base's documents. */
  async documentsPage(
    tenant: string,
    kb: string,
    limit: number,
    cursor: string | null,
  ): Promise<QueryPage> {
    const pk = documentsPk(tenant, kb);
    return this.items.query({ pk, prefix: DOCUMENT_PREFIX, limit, cursor });
  }

  /** Every document of the knowledge base, 500 a read. */
  async allDocuments(tenant: string, kb: string): Promise<Item[]> {
    const pk = documentsPk(tenant, kb);
    return queryArray(this.items, { pk, prefix: DOCUMENT_PREFIX, limit: 500 });
  }

  async getDocument(tenant: string, kb: string, documentId: string): Promise<Item | null> {
    return this.items.get(documentKey(tenant, kb, documentId));
  }

  /** Writes a document's item (its key from its `tenant_id`, `knowledge_base`, `document_id`). */
  async putDocument(
    record: { tenant_id: string; knowledge_base: string; document_id: string },
    condition: Condition,
  ): Promise<void> {
    const key = documentKey(record.tenant_id, record.knowledge_base, record.document_id);
    await this.items.put({ ...record, ...key }, condition);
  }

  /** Updates a document on condition; answers it as updated. */
  async updateDocument(
    tenant: string,
    kb: string,
    documentId: string,
    changes: Changes,
    condition?: Condition,
  ): Promise<Item> {
    return this.items.update(documentKey(tenant, kb, documentId), changes, condition);
  }

  async deleteDocument(tenant: string, kb: string, documentId: string): Promise<void> {
    await this.items.delete(documentKey(tenant, kb, documentId));
  }
}
