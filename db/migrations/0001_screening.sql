CREATE TABLE `screening_items` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`study_id` integer NOT NULL,
	`external_id` text NOT NULL,
	`position` integer NOT NULL,
	`kind` text NOT NULL,
	`content` text NOT NULL,
	`tags` text DEFAULT '[]' NOT NULL,
	`source` text NOT NULL,
	`content_hash` text NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`study_id`) REFERENCES `screening_studies`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `screening_items_study_external_idx` ON `screening_items` (`study_id`,`external_id`);--> statement-breakpoint
CREATE INDEX `screening_items_study_pos_idx` ON `screening_items` (`study_id`,`position`);--> statement-breakpoint
CREATE TABLE `screening_labels` (
	`item_id` integer PRIMARY KEY NOT NULL,
	`label` text NOT NULL,
	`category` text,
	`confidence` text,
	`rationale` text DEFAULT '' NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`item_id`) REFERENCES `screening_items`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE TABLE `screening_recall_tiers` (
	`study_id` integer NOT NULL,
	`round_number` integer NOT NULL,
	`item_id` integer NOT NULL,
	`tier` text NOT NULL,
	`rationale` text DEFAULT '' NOT NULL,
	`updated_at` integer NOT NULL,
	PRIMARY KEY(`study_id`, `round_number`, `item_id`),
	FOREIGN KEY (`study_id`) REFERENCES `screening_studies`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`item_id`) REFERENCES `screening_items`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE TABLE `screening_reviewers` (
	`round_id` integer NOT NULL,
	`reviewer_id` text NOT NULL,
	`assigned_at` integer NOT NULL,
	PRIMARY KEY(`round_id`, `reviewer_id`),
	FOREIGN KEY (`round_id`) REFERENCES `screening_rounds`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`reviewer_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `screening_reviewers_user_idx` ON `screening_reviewers` (`reviewer_id`);--> statement-breakpoint
CREATE TABLE `screening_round_items` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`round_id` integer NOT NULL,
	`item_id` integer NOT NULL,
	`position` integer NOT NULL,
	`is_control` integer NOT NULL,
	`stratum` text NOT NULL,
	FOREIGN KEY (`round_id`) REFERENCES `screening_rounds`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`item_id`) REFERENCES `screening_items`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `screening_round_items_round_pos_idx` ON `screening_round_items` (`round_id`,`position`);--> statement-breakpoint
CREATE UNIQUE INDEX `screening_round_items_round_item_idx` ON `screening_round_items` (`round_id`,`item_id`);--> statement-breakpoint
CREATE TABLE `screening_rounds` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`study_id` integer NOT NULL,
	`number` integer NOT NULL,
	`seed` integer NOT NULL,
	`status` text DEFAULT 'open' NOT NULL,
	`reviewers_per_round` integer NOT NULL,
	`inclusion_votes` integer NOT NULL,
	`control_threshold` real NOT NULL,
	`opened_at` integer NOT NULL,
	`opened_by` text,
	`closed_at` integer,
	FOREIGN KEY (`study_id`) REFERENCES `screening_studies`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `screening_rounds_study_number_idx` ON `screening_rounds` (`study_id`,`number`);--> statement-breakpoint
CREATE TABLE `screening_studies` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`name` text NOT NULL,
	`description` text DEFAULT '' NOT NULL,
	`categories` text NOT NULL,
	`reviewers_per_round` integer DEFAULT 3 NOT NULL,
	`inclusion_votes` integer DEFAULT 2 NOT NULL,
	`control_threshold` real DEFAULT 0.05 NOT NULL,
	`controls_per_round` integer DEFAULT 150 NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `screening_studies_name_unique` ON `screening_studies` (`name`);--> statement-breakpoint
CREATE TABLE `screening_votes` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`round_item_id` integer NOT NULL,
	`round_id` integer NOT NULL,
	`reviewer_id` text NOT NULL,
	`status` text DEFAULT 'draft' NOT NULL,
	`relevant` integer,
	`category` text,
	`confidence` text,
	`notes` text DEFAULT '' NOT NULL,
	`version` integer DEFAULT 1 NOT NULL,
	`updated_at` integer NOT NULL,
	`submitted_at` integer,
	FOREIGN KEY (`round_item_id`) REFERENCES `screening_round_items`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`round_id`) REFERENCES `screening_rounds`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`reviewer_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `screening_votes_item_reviewer_idx` ON `screening_votes` (`round_item_id`,`reviewer_id`);--> statement-breakpoint
CREATE INDEX `screening_votes_round_idx` ON `screening_votes` (`round_id`,`reviewer_id`);