/**
 * The composition root (docs/architecture.md, "Registration"): the one module that knows every protocol and gives
 * shared code what it needs from them. Imported by app/entry.server.tsx, so the server's start finds it filled.
 */
import { JUDGE_SET_PARENT } from "./judge-validation/public.server";
import { SCREENING_STUDY_PARENT } from "./screening/public.server";
import { REVIEW_SET_PARENT } from "./case-review/public.server";
import { MENTAT_BANK_PARENT } from "./mentat/public.server";
import { GRADING_SET_PARENT } from "./rubric-grading/public.server";
import { EVALUATION_IMPORT_PARENT } from "./evaluation/public.server";
import { DEMO_ACCOUNTS, DEMO_PASSWORD, isDemoDatabase, seedDemo } from "./demo/demo.server";
import { register } from "./platform/registry.server";
import { GRACE_SWEEP } from "./annotation/public.server";

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
});
