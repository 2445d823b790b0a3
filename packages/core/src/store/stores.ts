/**
 * One store per family of records, over one `ItemStore`: what the services
 * hold instead of the raw store. Wiring builds them once (`createStores`) and
 * hands each service the stores of its families.
 *
 * @example
 * const stores = createStores(items);
 * const keys = new ApiKeyService(stores.apiKeys, clock);
 */

import type { ItemStore } from "../ports/item-store";
import { ApiKeyStore } from "./api-key-store";
import { ExpiryStore } from "./expiry-store";
import { FileStore } from "./file-store";
import { HeldResultStore } from "./held-result-store";
import { KnowledgeStore } from "./knowledge-store";
import { LiveTextStore } from "./live-text-store";
import { NamespaceStore } from "./namespace-store";
import { QuotaStore } from "./quota-store";
import { ScheduleStore } from "./schedule-store";
import { SlotStore } from "./slot-store";
import { StreamLeaseStore } from "./stream-lease-store";
import { SweepIndex } from "./sweep-index";
import { TaskStore } from "./task-store";
import { TemplateStore } from "./template-store";
import { ThreadStore } from "./thread-store";
import { TriggerStore } from "./trigger-store";
import { WebhookStore } from "./webhook-store";

export interface Stores {
  tasks: TaskStore;
  /** Finished tasks' expiry markers (`service/retention.ts`). */
  expiries: ExpiryStore;
  apiKeys: ApiKeyStore;
  namespaces: NamespaceStore;
  quotas: QuotaStore;
  slots: SlotStore;
  schedules: ScheduleStore;
  triggers: TriggerStore;
  templates: TemplateStore;
  webhooks: WebhookStore;
  liveText: LiveTextStore;
  streamLeases: StreamLeaseStore;
  knowledge: KnowledgeStore;
  threads: ThreadStore;
  files: FileStore;
  sweepIndex: SweepIndex;
  /** Parallel groups' member results until their join (`vm/group.ts`). */
  heldResults: HeldResultStore;
}

/** Every family's store over `items`; `tasks` may be given (one TaskStore keeps caches). */
export function createStores(items: ItemStore, tasks = new TaskStore(items)): Stores {
  return {
    tasks,
    apiKeys: new ApiKeyStore(items),
    namespaces: new NamespaceStore(items),
    quotas: new QuotaStore(items),
    slots: new SlotStore(items),
    schedules: new ScheduleStore(items),
    triggers: new TriggerStore(items),
    templates: new TemplateStore(items),
    webhooks: new WebhookStore(items),
    liveText: new LiveTextStore(items),
    streamLeases: new StreamLeaseStore(items),
    knowledge: new KnowledgeStore(items),
    threads: new ThreadStore(items),
    files: new FileStore(items),
    sweepIndex: new SweepIndex(items),
    expiries: new ExpiryStore(items),
    heldResults: new HeldResultStore(items),
  };
}
