CREATE TABLE `prep_notes` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`project_id` integer NOT NULL,
	`external_id` text NOT NULL,
	`position` integer NOT NULL,
	`age_group` text DEFAULT '' NOT NULL,
	`sex` text DEFAULT '' NOT NULL,
	`sections` text NOT NULL,
	`proposals` text NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`project_id`) REFERENCES `prep_projects`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `prep_notes_project_external_idx` ON `prep_notes` (`project_id`,`external_id`);--> statement-breakpoint
CREATE INDEX `prep_notes_project_pos_idx` ON `prep_notes` (`project_id`,`position`);--> statement-breakpoint
CREATE TABLE `prep_projects` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`name` text NOT NULL,
	`source_language` text NOT NULL,
	`settings` text NOT NULL,
	`created_at` integer NOT NULL,
	`created_by` text,
	FOREIGN KEY (`created_by`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `prep_projects_name_unique` ON `prep_projects` (`name`);--> statement-breakpoint
CREATE TABLE `prep_reviewers` (
	`project_id` integer NOT NULL,
	`user_id` text NOT NULL,
	`added_at` integer NOT NULL,
	PRIMARY KEY(`project_id`, `user_id`),
	FOREIGN KEY (`project_id`) REFERENCES `prep_projects`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `prep_reviewers_user_idx` ON `prep_reviewers` (`user_id`);--> statement-breakpoint
CREATE TABLE `prep_reviews` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`note_id` integer NOT NULL,
	`reviewer_id` text NOT NULL,
	`status` text DEFAULT 'draft' NOT NULL,
	`decisions` text DEFAULT '{}' NOT NULL,
	`missed` text DEFAULT '[]' NOT NULL,
	`excluded` integer DEFAULT false NOT NULL,
	`exclusion_reason` text DEFAULT '' NOT NULL,
	`version` integer DEFAULT 1 NOT NULL,
	`updated_at` integer NOT NULL,
	`submitted_at` integer,
	FOREIGN KEY (`note_id`) REFERENCES `prep_notes`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`reviewer_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `prep_reviews_note_reviewer_idx` ON `prep_reviews` (`note_id`,`reviewer_id`);--> statement-breakpoint
CREATE INDEX `prep_reviews_reviewer_idx` ON `prep_reviews` (`reviewer_id`);