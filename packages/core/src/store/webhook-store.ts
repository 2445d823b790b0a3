/**
 * The stored side of outgoing webhooks: the tenant's signing secret
 * (`WEBHOOK_SECRET`) and each delivery of a task (`WH#{webhook_id}` in the
 * task's partition, with the body to send and its attempts).
 */
import { isErrorKind } from "../errors";
import type { WebhookDelivery } from "../model";
import type { ItemStore } from "../ports/item-store";
import { taskPk, WEBHOOK_DELIVERY_PREFIX, webhookDeliveryKey, webhookSecretKey } from "./keys";

/** A delivery as stored. */
export interface DeliveryRecord {
  webhook_id: string;
  type: WebhookDelivery["type"];
  url: string;
  body: string;
  status: WebhookDelivery["status"];
  attempts: WebhookDelivery["attempts"];
  created_at: string;
}

export class WebhookStore {
  constructor(private readonly items: ItemStore) {}

  /** The tenant's signing secret; null when it has none yet. */
  async getSecret(tenant: string): Promise<string | null> {
    const item = await this.items.get(webhookSecretKey(tenant));
    return typeof item?.secret === "string" ? item.secret : null;
  }

  /** Writes the tenant's first secret; when another was written first, answers that one. */
  async createSecret(tenant: string, secret: string, createdAt: string): Promise<string> {
    try {
      const item = {
        ...webhookSecretKey(tenant),
        tenant_id: tenant,
        secret,
        created_at: createdAt,
      };
      await this.items.put(item, { exists: false });
      return secret;
    } catch (error) {
      // Two first uses at once: the one written first is the secret.
      if (!isErrorKind(error, "conflict")) throw error;
      return (await this.getSecret(tenant)) as string;
    }
  }

  /** Writes a delivery once: a second write of the same id keeps the first (and its attempts). */
  async createDelivery(tenant: string, taskId: string, record: DeliveryRecord): Promise<void> {
    const item = { ...webhookDeliveryKey(tenant, taskId, record.webhook_id), ...record };
    await this.items.put(item, { exists: false }).catch((error: unknown) => {
      if (!isErrorKind(error, "conflict")) throw error;
    });
  }

  async getDelivery(tenant: string, taskId: string, id: string): Promise<DeliveryRecord | null> {
    const key = webhookDeliveryKey(tenant, taskId, id);
    return (await this.items.get(key)) as unknown as DeliveryRecord | null;
  }

  /** Records the attempts so far and the status they leave. */
  async recordAttempts(
    tenant: string,
    taskId: string,
    id: string,
    attempts: DeliveryRecord["attempts"],
    status: DeliveryRecord["status"],
  ): Promise<void> {
    await this.items.update(webhookDeliveryKey(tenant, taskId, id), {
      set: [
        [["attempts"], attempts],
        [["status"], status],
      ],
    });
  }

  /** The task's deliveries (at most 100), in no order. */
  async listDeliveries(tenant: string, taskId: string): Promise<DeliveryRecord[]> {
    const query = { pk: taskPk(tenant, taskId), prefix: WEBHOOK_DELIVERY_PREFIX, limit: 100 };
    return (await this.items.query(query)).items as unknown as DeliveryRecord[];
  }
}
