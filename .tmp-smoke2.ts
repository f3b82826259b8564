import { writeFileSync } from "node:fs";
import { runCli } from "./app/cli/index";
const gold = [
 {id:"a", diagnosis_sufficiency:"1", diagnosis_sufficiency_agreement:"1", diagnosis:"F20.0", diagnosis_agreement:"1", earliest_sufficient_section:"2", num_sections_in_input:3},
 {id:"b", diagnosis_sufficiency:"0", diagnosis_sufficiency_agreement:"1", diagnosis:"", diagnosis_agreement:"1", earliest_sufficient_section:"", num_sections_in_input:3},
 {id:"c", diagnosis_sufficiency:"1", diagnosis_sufficiency_agreement:"0", diagnosis:"F32.1", diagnosis_agreement:"0", earliest_sufficient_section:"1", num_sections_in_input:4},
];
writeFileSync("/tmp/smoke/gold.json", JSON.stringify(gold));
const io = { out: (t: string) => process.stdout.write(t), err: (t: string) => process.stderr.write(t), readStdin: async () => "", isTTY: false };
for (const extra of [[], ["--compat", "reference"]]) {
  const code = await runCli(["metrics", "--gold", "/tmp/smoke/gold.json", "--runs", "/tmp/smoke/runs", "--out", "/tmp/smoke/out" + extra.length, ...extra], io);
  console.log("exit", code);
}
