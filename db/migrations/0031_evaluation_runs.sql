CREATE TABLE `evaluation_imports` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`evaluation_id` integer NOT NULL,
	`source` text NOT NULL,
	`created_at` integer NOT NULL,
	`created_by` text,
	`import_run` text,
	FOREIGN KEY (`evaluation_id`) REFERENCES `evaluations`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `evaluation_imports_eval_idx` ON `evaluation_imports` (`evaluation_id`);--> statement-breakpoint
CREATE TABLE `evaluation_metrics` (
	`evaluation_id` integer NOT NULL,
	`mode` text NOT NULL,
	`version` integer NOT NULL,
	`output` text NOT NULL,
	FOREIGN KEY (`evaluation_id`) REFERENCES `evaluations`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `evaluation_metrics_pk` ON `evaluation_metrics` (`evaluation_id`,`mode`);--> statement-breakpoint
CREATE TABLE `evaluation_runs` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`evaluation_id` integer NOT NULL,
	`import_id` integer NOT NULL,
	`path` text NOT NULL,
	`model` text NOT NULL,
	`strategy` text NOT NULL,
	`seed` integer,
	`judge` text,
	`status` text NOT NULL,
	`trajectories` integer NOT NULL,
	`calls` integer NOT NULL,
	`retries` integer,
	`tokens` integer,
	`failures` integer NOT NULL,
	`seconds` real,
	`import_run` text,
	FOREIGN KEY (`evaluation_id`) REFERENCES `evaluations`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`import_id`) REFERENCES `evaluation_imports`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `evaluation_runs_eval_path_idx` ON `evaluation_runs` (`evaluation_id`,`path`);--> statement-breakpoint
CREATE INDEX `evaluation_runs_eval_model_idx` ON `evaluation_runs` (`evaluation_id`,`model`,`strategy`,`seed`,`id`);--> statement-breakpoint
CREATE INDEX `evaluation_runs_import_idx` ON `evaluation_runs` (`import_id`);--> statement-breakpoint
CREATE TABLE `evaluation_steps` (
	`trajectory_id` integer NOT NULL,
	`step_index` integer NOT NULL,
	`section_order` integer,
	`prompt` text NOT NULL,
	`answer` text NOT NULL,
	`judge_output` text NOT NULL,
	`primary_answer` text,
	`info_request` text,
	`icd_codes` text NOT NULL,
	`diagnosis_names` text NOT NULL,
	`action` text NOT NULL,
	FOREIGN KEY (`trajectory_id`) REFERENCES `evaluation_trajectories`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `evaluation_steps_pk` ON `evaluation_steps` (`trajectory_id`,`step_index`);--> statement-breakpoint
CREATE TABLE `evaluation_trajectories` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`run_id` integer NOT NULL,
	`evaluation_id` integer NOT NULL,
	`model` text NOT NULL,
	`strategy` text NOT NULL,
	`sample_id` text NOT NULL,
	`line` integer NOT NULL,
	`stopping_reason` text NOT NULL,
	`steps_executed` integer NOT NULL,
	`sections_total` integer NOT NULL,
	`first_diagnosis` integer,
	`code` text,
	`excluded` text,
	`outcome` text NOT NULL,
	`premature_diagnosis` integer NOT NULL,
	`premature_abstention` integer NOT NULL,
	`over_abstention` integer NOT NULL,
	`wrong_code` integer NOT NULL,
	`record` text NOT NULL,
	FOREIGN KEY (`run_id`) REFERENCES `evaluation_runs`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `evaluation_trajectories_run_idx` ON `evaluation_trajectories` (`run_id`,`sample_id`);--> statement-breakpoint
CREATE INDEX `evaluation_trajectories_case_idx` ON `evaluation_trajectories` (`evaluation_id`,`sample_id`,`model`,`strategy`);--> statement-breakpoint
CREATE INDEX `evaluation_trajectories_pd_idx` ON `evaluation_trajectories` (`evaluation_id`,`premature_diagnosis`,`sample_id`,`id`);--> statement-breakpoint
CREATE INDEX `evaluation_trajectories_pa_idx` ON `evaluation_trajectories` (`evaluation_id`,`premature_abstention`,`sample_id`,`id`);--> statement-breakpoint
CREATE INDEX `evaluation_trajectories_oa_idx` ON `evaluation_trajectories` (`evaluation_id`,`over_abstention`,`sample_id`,`id`);--> statement-breakpoint
CREATE INDEX `evaluation_trajectories_wc_idx` ON `evaluation_trajectories` (`evaluation_id`,`wrong_code`,`sample_id`,`id`);--> statement-breakpoint
CREATE TABLE `evaluations` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`name` text NOT NULL,
	`study_id` integer,
	`gold` text NOT NULL,
	`gold_sha256` text NOT NULL,
	`version` integer DEFAULT 0 NOT NULL,
	`created_at` integer NOT NULL,
	`created_by` text
);
--> statement-breakpoint
CREATE UNIQUE INDEX `evaluations_name_unique` ON `evaluations` (`name`);--> statement-breakpoint
CREATE VIEW `visible_evaluation_imports` AS select "id", "evaluation_id", "source", "created_at", "created_by", "import_run" from "evaluation_imports" where "evaluation_imports"."import_run" is null;--> statement-breakpoint
CREATE VIEW `visible_evaluation_runs` AS select "id", "evaluation_id", "import_id", "path", "model", "strategy", "seed", "judge", "status", "trajectories", "calls", "retries", "tokens", "failures", "seconds", "import_run" from "evaluation_runs" where ("evaluation_runs"."import_run" is null or "evaluation_runs"."import_run" not in (select "import_runs"."id" from "import_runs")) and exists (select 1 from evaluation_imports p where p.id = "evaluation_runs"."import_id" and p.import_run is null);