import { describe, expect, it } from "vitest";
import { bedrockModelArns } from "../../infra/bedrock-arns";

const place = { partition: "aws", region: "eu-west-1", account: "123456789012" };

describe("bedrockModelArns", () => {
  it("grants a foundation model in the region, a profile and its model in any region, once each", () => {
    expect(
      bedrockModelArns(
        ["amazon.nova-lite-v1:0", "eu.amazon.nova-lite-v1:0", "amazon.nova-lite-v1:0", ""],
        place,
      ),
    ).toEqual([
      "arn:aws:bedrock:eu-west-1::foundation-model/amazon.nova-lite-v1:0",
      "arn:aws:bedrock:eu-west-1:123456789012:inference-profile/eu.amazon.nova-lite-v1:0",
      "arn:aws:bedrock:*::foundation-model/amazon.nova-lite-v1:0",
    ]);
  });

  it("takes an ARN as it is (a provisioned or imported model)", () => {
    const arn = "arn:aws:bedrock:eu-west-1:123456789012:provisioned-model/abc123";
    expect(bedrockModelArns([arn], place)).toEqual([arn]);
  });

  it("refuses a model id that is no Bedrock id, saying which secrets to set", () => {
    expect(() => bedrockModelArns(["gpt-4o-mini"], place)).toThrow(
      /'gpt-4o-mini' is no Bedrock model id .* set LlmModel, ReasonLlmModel, EvalLlmModel and EmbeddingModel/,
    );
  });
});
