/**
 * Translation of the item store's conditions, changes and filters into DynamoDB
 * expressions. Every attribute name goes through an `#n` placeholder and every
 * value through a `:v` placeholder, so reserved words (`status`, `name`, `size`)
 * and names with `.`, `#`, `:` or spaces mean what they say.
 */
import type { Changes, Condition } from "@stackvm/core";

/** Collects placeholders while expressions are written. */
export class ExpressionBuilder {
  readonly names: Record<string, string> = {};
  readonly values: Record<string, unknown> = {};
  readonly #nameIds = new Map<string, string>();
  #valueCount = 0;

  /** The placeholder of an attribute name (one per distinct name). */
  name(attribute: string): string {
    let id = this.#nameIds.get(attribute);
    if (id === undefined) {
      id = `#n${this.#nameIds.size}`;
      this.#nameIds.set(attribute, id);
      this.names[id] = attribute;
    }
    return id;
  }

  /** A document path through maps: `#n0.#n1`. */
  path(parts: string[]): string {
    return parts.map((part) => this.name(part)).join(".");
  }

  /** The placeholder of a value. */
  value(value: unknown): string {
    const id = `:v${this.#valueCount++}`;
    this.values[id] = value;
    return id;
  }

  /** The placeholders to send, leaving out empty maps (DynamoDB refuses them). */
  attributes(): {
    ExpressionAttributeNames?: Record<string, string>;
    ExpressionAttributeValues?: Record<string, unknown>;
  } {
    return {
      ...(Object.keys(this.names).length > 0 ? { ExpressionAttributeNames: this.names } : {}),
      ...(Object.keys(this.values).length > 0 ? { ExpressionAttributeValues: this.values } : {}),
    };
  }
}

/** `#a = :v` per attribute; `null` means absent or null, as in the port. */
export function equalityTerms(b: ExpressionBuilder, attributes: Record<string, unknown>): string[] {
  return Object.entries(attributes).map(([attribute, value]) => {
    const name = b.name(attribute);
    // `= NULL` is refused by DynamoDB ("incorrect operand type"): test the type instead.
    return value === null
      ? `(attribute_not_exists(${name}) OR attribute_type(${name}, ${b.value("NULL")}))`
      : `${name} = ${b.value(value)}`;
  });
}

/** The ConditionExpression of a condition, or undefined when it has no part. */
export function conditionExpression(
  b: ExpressionBuilder,
  condition: Condition | undefined,
): string | undefined {
  if (condition === undefined) return undefined;
  const terms: string[] = [];
  if (condition.exists === false) {
    const absent = `attribute_not_exists(${b.name("pk")})`;
    terms.push(
      condition.orExpiredBefore === undefined
        ? absent
        : `(${absent} OR ${b.name("ttl")} < ${b.value(condition.orExpiredBefore)})`,
    );
  } else if (condition.exists === true) {
    terms.push(`attribute_exists(${b.name("pk")})`);
  }
  terms.push(...equalityTerms(b, condition.equals ?? {}));
  for (const [attribute, bound] of Object.entries(condition.below ?? {})) {
    const name = b.name(attribute);
    terms.push(`(attribute_not_exists(${name}) OR ${name} < ${b.value(bound)})`);
  }
  return terms.length > 0 ? terms.join(" AND ") : undefined;
}

/**
 * The UpdateExpression of the changes, or undefined when there are none (an
 * UpdateItem without one still creates the item). `add` is written as
 * `SET p = if_not_exists(p, 0) + n` because DynamoDB's ADD only reaches
 * top-level attributes; setting `undefined` removes, as JSON would drop it.
 */
export function updateExpression(b: ExpressionBuilder, changes: Changes): string | undefined {
  const sets: string[] = [];
  const removes: string[] = [];
  for (const [path, value] of changes.set ?? []) {
    if (value === undefined) removes.push(b.path(path));
    else sets.push(`${b.path(path)} = ${b.value(value)}`);
  }
  for (const [path, by] of changes.add ?? []) {
    const target = b.path(path);
    sets.push(`${target} = if_not_exists(${target}, ${b.value(0)}) + ${b.value(by)}`);
  }
  for (const path of changes.remove ?? []) removes.push(b.path(path));
  const clauses = [
    sets.length > 0 ? `SET ${sets.join(", ")}` : "",
    removes.length > 0 ? `REMOVE ${removes.join(", ")}` : "",
  ].filter((clause) => clause !== "");
  return clauses.length > 0 ? clauses.join(" ") : undefined;
}
