/**
 * A namespace names the knowledge bases its plans may search: stored with the
 * namespace, copied into the config a task's branches carry, refused when a name
 * could not be a knowledge base.
 */
import { describe, expect, it } from "vitest";
import { createNamespaces } from "../service/namespaces";
import { NamespaceStore } from "../store/namespace-store";
import { MemoryItemStore } from "../testing/memory/memory-item-store";
import { builtinTools } from "../tools/registry";

describe("a namespace's knowledge_bases", () => {
  const setup = () =>
    createNamespaces(
      new NamespaceStore(new MemoryItemStore()),
      { now: () => 0 },
      builtinTools().values(),
      [],
    ).namespaces;

  it("is stored, deduplicated, and reaches the config a task carries", async () => {
    const namespaces = setup();
    await namespaces.put("t1", "support", {
      allowed_tools: [],
      allowed_hosts: [],
      description: "",
      knowledge_bases: ["handbook", "faq", "handbook"],
    });
    expect((await namespaces.config("t1", "support")).knowledge_bases).toEqual(["handbook", "faq"]);
  });

  it("is absent from a namespace that names none, and from the default one (which searches all)", async () => {
    const namespaces = setup();
    await namespaces.put("t1", "plain", { allowed_tools: [], allowed_hosts: [], description: "" });
    expect((await namespaces.config("t1", "plain")).knowledge_bases).toBeUndefined();
    expect((await namespaces.config("t1", "default")).knowledge_bases).toBeUndefined();
  });

  it("refuses a name that could not be a knowledge base", async () => {
    const namespaces = setup();
    const { NamespaceInput } = await import("../service/namespace-input");
    expect(NamespaceInput.safeParse({ knowledge_bases: ["../other"] }).success).toBe(false);
    expect(NamespaceInput.safeParse({ knowledge_bases: ["ok_name"] }).success).toBe(true);
    await expect(namespaces.config("t1", "missing")).rejects.toMatchObject({ kind: "not_found" });
  });
});
