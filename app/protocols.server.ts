/**
 * The composition root (docs/architecture.md, "Registration"): the one module that knows every protocol and gives
 * shared code what it needs from them. Imported by app/entry.server.tsx, so the server's start finds it filled.
 */
import { JUDGE_SET_GUIDELINES, JUDGE_SET_PARENT, JUDGE_VALIDATION_NAV } from "./judge-validation/public.server";
import { SCREENING_GUIDELINES, SCREENING_NAV, SCREENING_STUDY_PARENT } from "./screening/public.server";
import { REVIEW_SET_GUIDELINES, REVIEW_SET_PARENT } from "./case-review/public.server";
import { MENTAT_BANK_GUIDELINES, MENTAT_BANK_PARENT } from "./mentat/public.server";
import { GRADING_NAV, GRADING_SET_PARENT } from "./rubric-grading/public.server";
import { ADJUDICATION_NAV } from "./adjudication/public.server";
import { MC_EVALUATION_NAV } from "./mc-evaluation/public.server";
import { EXPERT_PANEL_NAV } from "./expert-panel/registration.server";
import { DEMO_ACCOUNTS, DEMO_PASSWORD, isDemoDatabase, seedDemo } from "./demo/demo.server";
import { register } from "./platform/registry.server";
import { ANNOTATION_NAV, GRACE_SWEEP, SAFE_PSYCH_GUIDELINES } from "./annotation/public.server";

register({
  hiddenParents: [JUDGE_SET_PARENT, SCREENING_STUDY_PARENT, REVIEW_SET_PARENT, MENTAT_BANK_PARENT, GRADING_SET_PARENT],
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
    ...JUDGE_VALIDATION_NAV,
    ...SCREENING_NAV,
    ...EXPERT_PANEL_NAV,
    ...MC_EVALUATION_NAV,
    ...GRADING_NAV,
  ],
});
