/**
 * A child process for the kill tests of the embedded DynamoDB: opens dynalite on
 * the folder given as its argument, then updates items with an indexed sort key
 * from many writers at once, for ever, printing "writing" once it has started.
 * The test kills it with SIGKILL mid-write and checks what the folder kept.
 */
import { createAwsClients, DynamoItemStore } from "@stackvm/aws";
import { bootstrap } from "../bootstrap";
import { startEmulators } from "../emulators";

const WRITER_ITEMS = 40;

const dataDir = process.argv[2];
if (dataDir === undefined) throw new Error("usage: dynalite-writer.ts DATA_DIR");
const emulators = await startEmulators({ dataDir });
const clients = createAwsClients(emulators);
await bootstrap(clients, { table: "stackvm", queue: "q", dlq: "q-dlq", bucket: "kill-test" });
const store = new DynamoItemStore(clients.doc, "stackvm");
// Unique across runs on the same folder, so that an entry left by an earlier run shows.
let version = Date.now() * 100;
const first = version;
let announced = false;
async function writer(item: number): Promise<never> {
  for (;;) {
    const v = String(++version);
    await store.update(
      { pk: "KILL", sk: `item#${item}` },
      {
        set: [
          [["v"], v],
          [["gsi1pk"], "KILL"],
          [["gsi1sk"], `item#${item}#${v}`],
        ],
      },
    );
    if (!announced && version - first > WRITER_ITEMS * 5) {
      announced = true;
      process.stdout.write("writing\n");
    }
  }
}
await Promise.all(Array.from({ length: WRITER_ITEMS }, (_, i) => writer(i)));
