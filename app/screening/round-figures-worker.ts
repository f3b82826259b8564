/**
 * The worker thread of the screening rounds' figures (docs/screening.md, "Round figures at scale"): on its own
 * connection it tallies every vote of one round, so that the web server's thread answers other requests meanwhile.
 * Compiled to build/workers/screening-round.js by `npm run build:cli`; started by `roundFiguresKept`. Logs nothing.
 */
import { answerFromWorker } from "../platform/db-worker.server";
import { computeRoundSummary, type RoundFiguresWork, type RoundSummary } from "./round-figures.server";

answerFromWorker<RoundFiguresWork, RoundSummary | null>((db, work) => computeRoundSummary(db, work));
