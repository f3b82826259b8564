CREATE TABLE `mentat_bank_raters` (
	`bank_id` integer NOT NULL,
	`rater_id` text NOT NULL,
	`assigned_at` integer NOT NULL,
	`assigned_by` text,
	PRIMARY KEY(`bank_id`, `rater_id`),
	FOREIGN KEY (`bank_id`) REFERENCES `mentat_banks`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`rater_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `mentat_bank_raters_rater_idx` ON `mentat_bank_raters` (`rater_id`);--> statement-breakpoint
CREATE TABLE `mentat_banks` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`name` text NOT NULL,
	`description` text DEFAULT '' NOT NULL,
	`preference_domains` text DEFAULT '["triage","documentation"]' NOT NULL,
	`seed` integer DEFAULT 1 NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `mentat_banks_name_unique` ON `mentat_banks` (`name`);--> statement-breakpoint
CREATE TABLE `mentat_datasets` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`bank_id` integer NOT NULL,
	`dimension` text NOT NULL,
	`params` text NOT NULL,
	`content_hash` text NOT NULL,
	`count` integer NOT NULL,
	`created_at` integer NOT NULL,
	`created_by` text,
	FOREIGN KEY (`bank_id`) REFERENCES `mentat_banks`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `mentat_datasets_bank_dimension_idx` ON `mentat_datasets` (`bank_id`,`dimension`);--> statement-breakpoint
CREATE TABLE `mentat_fits` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`bank_id` integer NOT NULL,
	`params` text NOT NULL,
	`input_hash` text NOT NULL,
	`result` text NOT NULL,
	`created_at` integer NOT NULL,
	`created_by` text,
	FOREIGN KEY (`bank_id`) REFERENCES `mentat_banks`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `mentat_fits_bank_idx` ON `mentat_fits` (`bank_id`,`id`);--> statement-breakpoint
CREATE TABLE `mentat_questions` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`bank_id` integer NOT NULL,
	`external_id` text NOT NULL,
	`position` integer NOT NULL,
	`domain` text NOT NULL,
	`texts` text NOT NULL,
	`options` text NOT NULL,
	`intended_answer` integer NOT NULL,
	`notes` text DEFAULT '' NOT NULL,
	`content_hash` text NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`bank_id`) REFERENCES `mentat_banks`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `mentat_questions_bank_external_idx` ON `mentat_questions` (`bank_id`,`external_id`);--> statement-breakpoint
CREATE INDEX `mentat_questions_bank_pos_idx` ON `mentat_questions` (`bank_id`,`position`);--> statement-breakpoint
CREATE TABLE `mentat_ratings` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`question_id` integer NOT NULL,
	`rater_id` text NOT NULL,
	`status` text DEFAULT 'draft' NOT NULL,
	`scores` text NOT NULL,
	`option_order` text NOT NULL,
	`shown_gender` text,
	`comment` text DEFAULT '' NOT NULL,
	`version` integer DEFAULT 1 NOT NULL,
	`updated_at` integer NOT NULL,
	`submitted_at` integer,
	FOREIGN KEY (`question_id`) REFERENCES `mentat_questions`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`rater_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `mentat_ratings_question_rater_idx` ON `mentat_ratings` (`question_id`,`rater_id`);--> statement-breakpoint
CREATE INDEX `mentat_ratings_rater_idx` ON `mentat_ratings` (`rater_id`);--> statement-breakpoint
CREATE TABLE `mentat_variants` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`dataset_id` integer NOT NULL,
	`question_id` integer NOT NULL,
	`variant_id` text NOT NULL,
	`position` integer NOT NULL,
	`gender` text,
	`age` integer,
	`race` text,
	`text` text NOT NULL,
	FOREIGN KEY (`dataset_id`) REFERENCES `mentat_datasets`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`question_id`) REFERENCES `mentat_questions`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `mentat_variants_dataset_variant_idx` ON `mentat_variants` (`dataset_id`,`variant_id`);--> statement-breakpoint
CREATE INDEX `mentat_variants_dataset_pos_idx` ON `mentat_variants` (`dataset_id`,`position`);--> statement-breakpoint
CREATE TABLE `review_items` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`set_id` integer NOT NULL,
	`external_id` text NOT NULL,
	`position` integer NOT NULL,
	`kind` text NOT NULL,
	`text` text NOT NULL,
	`case_type` text DEFAULT '' NOT NULL,
	`diagnosis` text DEFAULT '' NOT NULL,
	`seed_id` text DEFAULT '' NOT NULL,
	`content_hash` text NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`set_id`) REFERENCES `review_sets`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `review_items_set_external_idx` ON `review_items` (`set_id`,`external_id`);--> statement-breakpoint
CREATE INDEX `review_items_set_pos_idx` ON `review_items` (`set_id`,`position`);--> statement-breakpoint
CREATE TABLE `review_judgements` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`item_id` integer NOT NULL,
	`rater_id` text NOT NULL,
	`status` text DEFAULT 'draft' NOT NULL,
	`naturalness` integer,
	`validity` integer,
	`realism` integer,
	`decision` text,
	`reason` text DEFAULT '' NOT NULL,
	`comment` text DEFAULT '' NOT NULL,
	`version` integer DEFAULT 1 NOT NULL,
	`updated_at` integer NOT NULL,
	`submitted_at` integer,
	FOREIGN KEY (`item_id`) REFERENCES `review_items`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`rater_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `review_judgements_item_rater_idx` ON `review_judgements` (`item_id`,`rater_id`);--> statement-breakpoint
CREATE INDEX `review_judgements_rater_idx` ON `review_judgements` (`rater_id`);--> statement-breakpoint
CREATE TABLE `review_set_raters` (
	`set_id` integer NOT NULL,
	`rater_id` text NOT NULL,
	`assigned_at` integer NOT NULL,
	`assigned_by` text,
	PRIMARY KEY(`set_id`, `rater_id`),
	FOREIGN KEY (`set_id`) REFERENCES `review_sets`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`rater_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `review_set_raters_rater_idx` ON `review_set_raters` (`rater_id`);--> statement-breakpoint
CREATE TABLE `review_sets` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`name` text NOT NULL,
	`description` text DEFAULT '' NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `review_sets_name_unique` ON `review_sets` (`name`);--> statement-breakpoint
PRAGMA foreign_keys=OFF;--> statement-breakpoint
CREATE TABLE `__new_judge_responses` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`set_id` integer NOT NULL,
	`import_id` integer NOT NULL,
	`position` integer NOT NULL,
	`source_run` text DEFAULT '' NOT NULL,
	`sample_id` text NOT NULL,
	`model` text DEFAULT '' NOT NULL,
	`strategy` text DEFAULT '' NOT NULL,
	`step_index` integer,
	`is_last_section` integer NOT NULL,
	`model_output_raw` text NOT NULL,
	`new_judge_output` text,
	`record` text NOT NULL,
	`bucket` text,
	`derived_action` text NOT NULL,
	FOREIGN KEY (`set_id`) REFERENCES `judge_sets`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`import_id`) REFERENCES `judge_response_imports`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
INSERT INTO `__new_judge_responses`("id", "set_id", "import_id", "position", "source_run", "sample_id", "model", "strategy", "step_index", "is_last_section", "model_output_raw", "new_judge_output", "record", "bucket", "derived_action") SELECT "id", "set_id", "import_id", "position", "source_run", "sample_id", "model", "strategy", "step_index", "is_last_section", "model_output_raw", "new_judge_output", "record", "bucket", "derived_action" FROM `judge_responses`;--> statement-breakpoint
DROP TABLE `judge_responses`;--> statement-breakpoint
ALTER TABLE `__new_judge_responses` RENAME TO `judge_responses`;--> statement-breakpoint
PRAGMA foreign_keys=ON;--> statement-breakpoint
CREATE UNIQUE INDEX `judge_responses_set_pos_idx` ON `judge_responses` (`set_id`,`position`);--> statement-breakpoint
CREATE UNIQUE INDEX `judge_responses_identity_idx` ON `judge_responses` (`set_id`,`source_run`,`model`,`strategy`,`sample_id`,`step_index`);