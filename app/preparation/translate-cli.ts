/**
 * `prep-translate` (docs/preparation.md, "Translation"): a project's final notes translated into English and back,
 * through a provider configured on the server, with the same code as the job started from the project's page
 * (translation.server.ts `translateProject`).
 */
import { performance } from "node:perf_hooks";
import { CliError, parseOptions, requireOption, serviceCall, type Command } from "../cli/command";
import { createProgress } from "../model-calls/progress";
import { DEFAULT_RETRY_POLICY } from "../model-calls/retry";
import { getDb } from "../platform/db.server";
import { PAPER_TRANSLATION_MODEL } from "./domain/translation-prompt";
import {
  checkTranslationProvider,
  DEFAULT_TRANSLATION_CONCURRENCY,
  PAPER_MAX_TOKENS,
  recordTranslationRun,
  translateProject,
  translationEndpoint,
  translationTarget,
  type TranslateResult,
} from "./translation.server";

const help = `Usage: npm run concord -- prep-translate --project NAME --provider P [--back-translate-only]
                                         [--concurrency ${DEFAULT_TRANSLATION_CONCURRENCY}] [--max-tokens ${PAPER_MAX_TOKENS}]

Translates every section of the project's notes that have a final text into English with the Safe-Psych paper's
prompt (appendix 8.1; docs/preparation.md, "Translation"), then translates each translation back into the notes'
language with the same prompt, the languages swapped. Deterministic decoding (temperature 0), at most
${PAPER_MAX_TOKENS} tokens an answer by default, as in the paper (which used ${PAPER_TRANSLATION_MODEL}). Excluded notes and notes whose review is not final
(pending, or two reviews that differ) are skipped and counted.

Resuming: rerun the same command. Only what is missing is asked: a section not translated yet, one whose final text
changed since it was translated, one not back-translated yet. A failed call is recorded on its section and asked
again by the next run.

Options:
  --project NAME          the preparation project
  --provider P            a provider configured on the server (CONCORD_PROVIDERS; docs/deploying.md)
  --back-translate-only   only the back-translations of the sections already translated
  --concurrency N         calls in flight at once (default ${DEFAULT_TRANSLATION_CONCURRENCY})
  --max-tokens N          answer limit (default ${PAPER_MAX_TOKENS}, the paper's)
  --timeout SECONDS       per-call time-out (default 300)
  --max-retries N         retries on 429, 5xx, time-outs, empty answers (default 12)
  --retry-delay SECONDS   first back-off step, doubled per retry with jitter, capped at 60 s (default 1)

Exit status: 0 when every section of the final notes is translated and back-translated, 1 when some failed or the
run stopped (what finished is kept), 2 for bad input.`;

function count(value: string | undefined, flag: string, fallback: number, max: number, min = 1): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!/^\d+$/.test(value) || !Number.isInteger(n) || n < min || n > max)
    throw new CliError(`${flag} must be a whole number from ${min} to ${max}, got "${value}".`);
  return n;
}

function summary(project: string, r: TranslateResult): string {
  const s = (n: number, what: string) => `${n} ${what}${n === 1 ? "" : "s"}`;
  return (
    `${project}: ${s(r.finalNotes, "final note")} of ${r.notes} (${r.excluded} excluded, ${r.notFinal} not final: ` +
    `skipped), ${s(r.sections, "section")}; this run translated ${r.translated}, back-translated ` +
    `${r.backTranslated}, ${r.failed} failed; ${r.missing} missing; ${r.calls} calls, ${r.retries} retries` +
    `${r.truncated ? `; ${s(r.truncated, "answer")} cut at the length limit` : ""}` +
    `${r.message ? `; stopped: ${r.message}` : ""}\n`
  );
}

export const prepTranslateCommand: Command = {
  name: "prep-translate",
  summary: "Translate a preparation project's final notes into English and back (resumable)",
  help,
  async run(argv, io) {
    const { values } = parseOptions(argv, {
      project: { type: "string" },
      provider: { type: "string" },
      "back-translate-only": { type: "boolean", default: false },
      concurrency: { type: "string" },
      "max-tokens": { type: "string" },
      timeout: { type: "string" },
      "max-retries": { type: "string" },
      "retry-delay": { type: "string" },
    });
    const projectName = requireOption(values.project, "--project");
    const provider = requireOption(values.provider, "--provider");
    const concurrency = count(values.concurrency, "--concurrency", DEFAULT_TRANSLATION_CONCURRENCY, 1024);
    const maxTokens = count(values["max-tokens"], "--max-tokens", PAPER_MAX_TOKENS, 100_000);
    const timeoutMs = 1000 * count(values.timeout, "--timeout", 300, 86_400);
    const maxRetries = count(values["max-retries"], "--max-retries", DEFAULT_RETRY_POLICY.maxRetries, 100, 0);
    const delay = values["retry-delay"];
    if (delay !== undefined && !/^\d+(\.\d+)?$/.test(delay))
      throw new CliError(`--retry-delay must be a number of seconds, got "${delay}".`);
    const baseDelayMs = delay === undefined ? DEFAULT_RETRY_POLICY.baseDelayMs : Number(delay) * 1000;
    const db = getDb();
    const target = serviceCall(() => translationTarget(db, { name: projectName }));
    serviceCall(() => checkTranslationProvider(provider));
    const { endpoint, model } = serviceCall(() => translationEndpoint(provider, timeoutMs));

    const interrupt = new AbortController();
    const onSigint = () => {
      io.err("\nstopping: asking nothing new, keeping what is done (press Ctrl-C again to quit at once)\n");
      interrupt.abort();
    };
    process.once("SIGINT", onSigint);
    let result: TranslateResult;
    try {
      result = await translateProject(
        db,
        {
          projectId: target.projectId,
          languageName: target.languageName,
          endpoint,
          model,
          maxTokens,
          concurrency,
          backTranslateOnly: values["back-translate-only"],
          retry: { ...DEFAULT_RETRY_POLICY, maxRetries, baseDelayMs },
        },
        {
          progress: (step) => {
            io.err(`${step}:\n`);
            return createProgress(io.err, io.isTTY, () => performance.now(), "sections");
          },
          signal: interrupt.signal,
        },
      );
    } finally {
      process.removeListener("SIGINT", onSigint);
    }
    recordTranslationRun(db, { projectId: target.projectId, provider, result, actorId: null });
    io.out(summary(target.project, result));
    return result.status === "complete" ? 0 : 1;
  },
};
