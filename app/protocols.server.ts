/**
 * The composition root (docs/architecture.md, "Registration"): the one module that knows every protocol and gives
 * shared code what it needs from them. Imported by app/entry.server.tsx, so the server's start finds it filled.
 */
import { JUDGE_SET_GUIDELINES, JUDGE_SET_PARENT, JUDGE_VALIDATION_NAV } from "./judge-validation/public.server";
import { SCREENING_GUIDELINES, SCREENING_NAV, SCREENING_STUDY_PARENT } from "./screening/public.server";
import { REVIEW_SET_GUIDELINES, REVIEW_SET_PARENT } from "./case-review/public.server";
import { MENTAT_BANK_GUIDELINES, MENTAT_BANK_PARENT } from "./mentat/public.server";
import { GRADING_NAV, GRADING_SET_PARENT } from "./rubric-grading/public.server";
import { PREPARATION_NAV } from "./preparation/public.server";
import { ADJUDICATION_NAV } from "./adjudication/public.server";
import { MC_EVALUATION_NAV } from "./mc-evaluation/public.server";
import { EXPERT_PANEL_NAV } from "./expert-panel/registration.server";
import { EVALUATION_IMPORT_PARENT, EVALUATIONS_NAV, MODEL_REVIEW_NAV } from "./evaluation/public.server";
import { DEMO_ACCOUNTS, DEMO_PASSWORD, isDemoDatabase, seedDemo } from "./demo/demo.server";
import { register } from "./platform/registry.server";
import { ANNOTATION_NAV, GRACE_SWEEP, SAFE_PSYCH_GUIDELINES } from "./annotation/public.server";
import { SAFE_PSYCH_JOB_KIND } from "./evaluation/run-job.server";
import { GRADING_JOB_KIND } from "./rubric-grading/grading-job.server";
import { MC_JOB_KIND } from "./mc-evaluation/mc-job.server";
import { TRANSLATION_JOB_KIND } from "./preparation/public.server";

register({
  hiddenParents: [
    JUDGE_SET_PARENT,
    SCREENING_STUDY_PARENT,
    REVIEW_SET_PARENT,
    MENTAT_BANK_PARENT,
    GRADING_SET_PARENT,
    EVALUATION_IMPORT_PARENT,
  ],
  demo: { seed: seedDemo, isDemoDatabase, accounts: DEMO_ACCOUNTS, password: DEMO_PASSWORD },
  periodic: [GRACE_SWEEP],
  guidelines: [
    SAFE_PSYCH_GUIDELINES,
    JUDGE_SET_GUIDELINES,
    SCREENING_GUIDELINES,
    MENTAT_BANK_GUIDELINES,
    REVIEW_SET_GUIDELINES,
  ],
  // Within each role's links, the header keeps this order.
  nav: [
    ...ANNOTATION_NAV,
    ...ADJUDICATION_NAV,
    ...MODEL_REVIEW_NAV,
    ...JUDGE_VALIDATION_NAV,
    ...SCREENING_NAV,
    ...EXPERT_PANEL_NAV,
    ...EVALUATIONS_NAV,
    ...MC_EVALUATION_NAV,
    ...GRADING_NAV,
    ...PREPARATION_NAV,
    // The evaluation jobs span protocols (docs/evaluation.md, "Running from the browser").
    { to: "/admin/eval-jobs", label: "Jobs", role: "admin" },
  ],
});

/**
 * The evaluation jobs started from the browser (docs/evaluation.md, "Running from the browser"), by kind: their
 * names on the pages and where a finished job's results are.
 */
export const EVAL_JOBS = {
  [SAFE_PSYCH_JOB_KIND]: {
    title: "Safe-Psych run",
    // The evaluation the job's end step imported its run folders into (finishSafePsychJob); none when it named no
    // evaluation or the import was refused (the job page lists the refusal).
    results: (r: Record<string, unknown>) => {
      const i = r.import as { imported?: unknown; evaluationId?: unknown; evaluation?: unknown } | undefined;
      return i?.imported === true && typeof i.evaluationId === "number"
        ? { href: `/admin/evaluations/${i.evaluationId}`, label: `The evaluation "${String(i.evaluation)}"` }
        : null;
    },
  },
  [GRADING_JOB_KIND]: {
    title: "Rubric-grading run",
    results: (r: Record<string, unknown>) =>
      typeof r.gradingSetId === "number"
        ? { href: `/admin/grading/${r.gradingSetId}`, label: `The report of "${String(r.gradingSet)}"` }
        : null,
  },
  [MC_JOB_KIND]: {
    title: "Multiple-choice run",
    results: (r: Record<string, unknown>) =>
      typeof r.mcReport === "string"
        ? { href: `/admin/mc-evaluation?report=${encodeURIComponent(r.mcReport)}`, label: `The report ${r.mcReport}` }
        : null,
  },
  [TRANSLATION_JOB_KIND]: {
    title: "Preparation translation",
    // The project whose sections the job translated (app/preparation/translation.server.ts runTranslationJob).
    results: (r: Record<string, unknown>) =>
      typeof r.projectId === "number"
        ? { href: `/admin/preparation/${r.projectId}`, label: `The project "${String(r.project)}"` }
        : null,
  },
} as const satisfies Record<
  string,
  { title: string; results: (r: Record<string, unknown>) => { href: string; label: string } | null }
>;
export const EVAL_JOB_KINDS = Object.keys(EVAL_JOBS);
