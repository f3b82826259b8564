import { writeFileSync, readdirSync, readFileSync } from "node:fs";
import { startOpenAiStub, scriptedHandler } from "./test/support/openai-stub";
import { runCli } from "./app/cli/index";
const stub = await startOpenAiStub(scriptedHandler("judge-m", 5));
const samples = [
  { sample_id: "a", sections: [{ order: 1, content: "s1 [[clarify]]" }, { order: 2, content: "s2 [[diagnose:F20]]" }, { order: 3, content: "s3" }] },
  { sample_id: "b", sections: [{ order: 1, content: "s1 [[abstain]]" }, { order: 2, content: "s2" }, { order: 3, content: "s3" }] },
  { sample_id: "c", sections: [{ order: 1, content: "s1 [[clarify]]" }, { order: 2, content: "s2 [[empty]]" }, { order: 3, content: "s3 [[clarify]]" }, { order: 4, content: "s4 [[clarify]]" }] },
];
writeFileSync("/tmp/smoke/samples.json", JSON.stringify(samples));
const io = { out: (t: string) => process.stdout.write(t), err: (t: string) => process.stderr.write(t), readStdin: async () => "", isTTY: false };
const code = await runCli(["run", "--samples", "/tmp/smoke/samples.json", "--strategy", "all", "--model", "m1", "--judge-model", "judge-m", "--base-url", stub.baseURL, "--out", "/tmp/smoke/runs", "--retry-delay", "0.001", "--max-retries", "2"], io);
console.log("exit", code, "calls", stub.calls.length);
await stub.close();
