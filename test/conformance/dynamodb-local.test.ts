/**
 * The item-store conformance suite against AWS's DynamoDB Local, to catch where
 * dynalite (the embedded emulator) differs from DynamoDB.
 */
import { CreateTableCommand } from "@aws-sdk/client-dynamodb";
import { createAwsClients, createTableInput, DynamoItemStore } from "@stackvm/aws";
import { startDynamoDbLocal } from "../support/dynamodb-local";
import { itemStoreSuite } from "./item-store.suite";

itemStoreSuite("DynamoItemStore on DynamoDB Local", async () => {
  const local = await startDynamoDbLocal();
  const clients = createAwsClients({ ...local, endpoints: { dynamodb: local.endpoint } });
  await clients.dynamodb.send(new CreateTableCommand(createTableInput("conformance")));
  return {
    store: new DynamoItemStore(clients.doc, "conformance"),
    async close() {
      clients.destroy();
      await local.stop();
    },
  };
});
