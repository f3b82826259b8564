CREATE TABLE `judge_candidates` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`set_id` integer NOT NULL,
	`name` text NOT NULL,
	`filename` text NOT NULL,
	`imported_by` text,
	`imported_at` integer NOT NULL,
	FOREIGN KEY (`set_id`) REFERENCES `judge_sets`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`imported_by`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `judge_candidates_set_name_idx` ON `judge_candidates` (`set_id`,`name`);--> statement-breakpoint
CREATE TABLE `judge_items` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`set_id` integer NOT NULL,
	`response_id` integer NOT NULL,
	`annotation_id` text NOT NULL,
	`bucket` text NOT NULL,
	`derived_action` text NOT NULL,
	`position` integer NOT NULL,
	FOREIGN KEY (`set_id`) REFERENCES `judge_sets`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`response_id`) REFERENCES `judge_responses`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `judge_items_set_annotation_idx` ON `judge_items` (`set_id`,`annotation_id`);--> statement-breakpoint
CREATE UNIQUE INDEX `judge_items_set_response_idx` ON `judge_items` (`set_id`,`response_id`);--> statement-breakpoint
CREATE TABLE `judge_outputs` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`judge_id` integer NOT NULL,
	`item_id` integer NOT NULL,
	`primary_answer` text,
	`info_request` text,
	`action` text,
	`raw` text,
	FOREIGN KEY (`judge_id`) REFERENCES `judge_candidates`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`item_id`) REFERENCES `judge_items`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `judge_outputs_judge_item_idx` ON `judge_outputs` (`judge_id`,`item_id`);--> statement-breakpoint
CREATE TABLE `judge_ratings` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`item_id` integer NOT NULL,
	`rater_id` text NOT NULL,
	`status` text DEFAULT 'assigned' NOT NULL,
	`primary_answer` text,
	`info_request` text,
	`icd_codes` text DEFAULT '' NOT NULL,
	`diagnosis_names` text DEFAULT '' NOT NULL,
	`notes` text DEFAULT '' NOT NULL,
	`version` integer DEFAULT 0 NOT NULL,
	`assigned_at` integer NOT NULL,
	`assigned_by` text,
	`updated_at` integer,
	`submitted_at` integer,
	FOREIGN KEY (`item_id`) REFERENCES `judge_items`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`rater_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `judge_ratings_item_rater_idx` ON `judge_ratings` (`item_id`,`rater_id`);--> statement-breakpoint
CREATE INDEX `judge_ratings_rater_idx` ON `judge_ratings` (`rater_id`);--> statement-breakpoint
CREATE TABLE `judge_response_imports` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`set_id` integer NOT NULL,
	`filename` text NOT NULL,
	`sha256` text NOT NULL,
	`format` text NOT NULL,
	`rows` integer NOT NULL,
	`imported_by` text,
	`imported_at` integer NOT NULL,
	FOREIGN KEY (`set_id`) REFERENCES `judge_sets`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`imported_by`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `judge_response_imports_set_sha_idx` ON `judge_response_imports` (`set_id`,`sha256`);--> statement-breakpoint
CREATE TABLE `judge_responses` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`set_id` integer NOT NULL,
	`import_id` integer NOT NULL,
	`position` integer NOT NULL,
	`source_run` text DEFAULT '' NOT NULL,
	`sample_id` text NOT NULL,
	`model` text DEFAULT '' NOT NULL,
	`strategy` text DEFAULT '' NOT NULL,
	`step_index` integer NOT NULL,
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
CREATE UNIQUE INDEX `judge_responses_set_pos_idx` ON `judge_responses` (`set_id`,`position`);--> statement-breakpoint
CREATE UNIQUE INDEX `judge_responses_identity_idx` ON `judge_responses` (`set_id`,`source_run`,`model`,`strategy`,`sample_id`,`step_index`);--> statement-breakpoint
CREATE TABLE `judge_sets` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`name` text NOT NULL,
	`seed` integer DEFAULT 123 NOT NULL,
	`status` text DEFAULT 'drafting' NOT NULL,
	`targets` text NOT NULL,
	`summary` text,
	`drawn_at` integer,
	`created_by` text,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`created_by`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `judge_sets_name_unique` ON `judge_sets` (`name`);