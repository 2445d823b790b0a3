import { join } from "node:path";
import { bundle, entries } from "./bundles";
const entry = entries.find((e) => e.name === "api");
if (!entry) throw new Error("no api");
const b = await bundle("zz-api", { entryPoints: [join(process.cwd(), entry.file)] }, entry.external, "/tmp/zz-api2", false);
console.log(b.eagerInputs.filter((i) => /core\/src\/model\.ts/.test(i)));
