CREATE TABLE `evaluation_case_counts` (
	`evaluation_id` integer NOT NULL,
	`model` text NOT NULL,
	`strategy` text NOT NULL,
	`trajectories` integer NOT NULL,
	`premature_diagnosis` integer NOT NULL,
	`premature_abstention` integer NOT NULL,
	`over_abstention` integer NOT NULL,
	`wrong_code` integer NOT NULL,
	`seed_disagreement` integer NOT NULL,
	FOREIGN KEY (`evaluation_id`) REFERENCES `evaluations`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `evaluation_case_counts_pk` ON `evaluation_case_counts` (`evaluation_id`,`model`,`strategy`);--> statement-breakpoint
ALTER TABLE `evaluation_trajectories` ADD `seed_disagreement` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
CREATE INDEX `evaluation_trajectories_sd_idx` ON `evaluation_trajectories` (`evaluation_id`,`seed_disagreement`,`sample_id`,`id`);--> statement-breakpoint
-- Hand-written: the seed-disagreement flags and the case list's counts of the evaluations already imported, as
-- app/evaluation/evaluations.server.ts:keepCaseCounts keeps them at each import (docs/evaluation.md, "Scale").
UPDATE `evaluation_trajectories` SET `seed_disagreement` = (`excluded` IS NULL AND EXISTS (SELECT 1 FROM `evaluation_trajectories` u WHERE u.`evaluation_id` = `evaluation_trajectories`.`evaluation_id` AND u.`sample_id` = `evaluation_trajectories`.`sample_id` AND u.`model` = `evaluation_trajectories`.`model` AND u.`strategy` = `evaluation_trajectories`.`strategy` AND u.`excluded` IS NULL AND u.`outcome` <> `evaluation_trajectories`.`outcome`));--> statement-breakpoint
INSERT INTO `evaluation_case_counts` (`evaluation_id`, `model`, `strategy`, `trajectories`, `premature_diagnosis`, `premature_abstention`, `over_abstention`, `wrong_code`, `seed_disagreement`) SELECT t.`evaluation_id`, t.`model`, t.`strategy`, count(*), sum(t.`premature_diagnosis`), sum(t.`premature_abstention`), sum(t.`over_abstention`), sum(t.`wrong_code`), sum(t.`seed_disagreement`) FROM `evaluation_trajectories` t JOIN `visible_evaluation_runs` r ON r.`id` = t.`run_id` GROUP BY t.`evaluation_id`, t.`model`, t.`strategy`;
