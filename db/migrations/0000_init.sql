CREATE TABLE `adjudications` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`case_id` integer NOT NULL,
	`adjudicator_id` text NOT NULL,
	`mode` text NOT NULL,
	`status` text NOT NULL,
	`independent_label` text,
	`independent_at` integer,
	`final_label` text,
	`rationale` text DEFAULT '' NOT NULL,
	`decided_at` integer,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`case_id`) REFERENCES `cases`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`adjudicator_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `adjudications_case_idx` ON `adjudications` (`case_id`);--> statement-breakpoint
CREATE INDEX `adjudications_user_idx` ON `adjudications` (`adjudicator_id`);--> statement-breakpoint
CREATE TABLE `annotations` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`assignment_id` integer NOT NULL,
	`case_id` integer NOT NULL,
	`annotator_id` text NOT NULL,
	`status` text DEFAULT 'draft' NOT NULL,
	`sufficiency` text,
	`icd10` text,
	`earliest_section` integer,
	`missing_info` text DEFAULT '[]' NOT NULL,
	`missing_other` text DEFAULT '' NOT NULL,
	`notes` text DEFAULT '' NOT NULL,
	`version` integer DEFAULT 1 NOT NULL,
	`updated_at` integer NOT NULL,
	`submitted_at` integer,
	FOREIGN KEY (`assignment_id`) REFERENCES `assignments`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`case_id`) REFERENCES `cases`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`annotator_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `annotations_assignment_id_unique` ON `annotations` (`assignment_id`);--> statement-breakpoint
CREATE INDEX `annotations_case_idx` ON `annotations` (`case_id`);--> statement-breakpoint
CREATE TABLE `app_meta` (
	`key` text PRIMARY KEY NOT NULL,
	`value` text NOT NULL
);
--> statement-breakpoint
CREATE TABLE `assignments` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`case_id` integer NOT NULL,
	`annotator_id` text NOT NULL,
	`assigned_at` integer NOT NULL,
	`assigned_by` text,
	FOREIGN KEY (`case_id`) REFERENCES `cases`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`annotator_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `assignments_case_annotator_idx` ON `assignments` (`case_id`,`annotator_id`);--> statement-breakpoint
CREATE INDEX `assignments_annotator_idx` ON `assignments` (`annotator_id`);--> statement-breakpoint
CREATE TABLE `case_outcomes` (
	`case_id` integer PRIMARY KEY NOT NULL,
	`study_id` integer NOT NULL,
	`status` text NOT NULL,
	`dispute_reason` text,
	`sufficiency_agreement` integer NOT NULL,
	`diagnosis_agreement` integer NOT NULL,
	`gold` text,
	`annotator_order` text NOT NULL,
	`disputed_at` integer,
	`version` integer DEFAULT 1 NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`case_id`) REFERENCES `cases`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`study_id`) REFERENCES `studies`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `case_outcomes_study_idx` ON `case_outcomes` (`study_id`,`status`);--> statement-breakpoint
CREATE TABLE `case_sections` (
	`case_id` integer NOT NULL,
	`ord` integer NOT NULL,
	`kind` text NOT NULL,
	`content` text NOT NULL,
	PRIMARY KEY(`case_id`, `ord`),
	FOREIGN KEY (`case_id`) REFERENCES `cases`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE TABLE `cases` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`study_id` integer NOT NULL,
	`external_id` text NOT NULL,
	`position` integer NOT NULL,
	`age_group` text DEFAULT '' NOT NULL,
	`sex` text DEFAULT '' NOT NULL,
	`num_sections` integer NOT NULL,
	`content_hash` text NOT NULL,
	`version` integer DEFAULT 1 NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`study_id`) REFERENCES `studies`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `cases_study_external_idx` ON `cases` (`study_id`,`external_id`);--> statement-breakpoint
CREATE INDEX `cases_study_pos_idx` ON `cases` (`study_id`,`position`);--> statement-breakpoint
CREATE TABLE `events` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`at` integer NOT NULL,
	`actor_id` text,
	`study_id` integer,
	`case_id` integer,
	`entity` text NOT NULL,
	`entity_id` text NOT NULL,
	`action` text NOT NULL,
	`changes` text DEFAULT '{}' NOT NULL
);
--> statement-breakpoint
CREATE INDEX `events_case_idx` ON `events` (`case_id`,`id`);--> statement-breakpoint
CREATE INDEX `events_entity_idx` ON `events` (`entity`,`entity_id`);--> statement-breakpoint
CREATE TABLE `imports` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`study_id` integer NOT NULL,
	`filename` text NOT NULL,
	`sha256` text NOT NULL,
	`format` text NOT NULL,
	`created` integer NOT NULL,
	`updated` integer NOT NULL,
	`unchanged` integer NOT NULL,
	`imported_by` text,
	`imported_at` integer NOT NULL,
	FOREIGN KEY (`study_id`) REFERENCES `studies`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE TABLE `login_failures` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`username` text NOT NULL,
	`ip` text NOT NULL,
	`at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `login_failures_username_idx` ON `login_failures` (`username`,`at`);--> statement-breakpoint
CREATE INDEX `login_failures_ip_idx` ON `login_failures` (`ip`,`at`);--> statement-breakpoint
CREATE TABLE `pending_imports` (
	`id` text PRIMARY KEY NOT NULL,
	`study_name` text NOT NULL,
	`filename` text NOT NULL,
	`content` text NOT NULL,
	`created_by` text NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`created_by`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE TABLE `reference_labels` (
	`case_id` integer PRIMARY KEY NOT NULL,
	`diagnosis_sufficiency` text,
	`diagnosis_sufficiency_agreement` text,
	`diagnosis` text,
	`diagnosis_agreement` text,
	`earliest_sufficient_section` text,
	`source_diagnosis` text,
	`extras` text,
	FOREIGN KEY (`case_id`) REFERENCES `cases`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE TABLE `sessions` (
	`id` text PRIMARY KEY NOT NULL,
	`user_id` text NOT NULL,
	`expires_at` integer NOT NULL,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `sessions_user_idx` ON `sessions` (`user_id`);--> statement-breakpoint
CREATE TABLE `studies` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`name` text NOT NULL,
	`description` text DEFAULT '' NOT NULL,
	`adjudication_mode` text DEFAULT 'two_phase' NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `studies_name_unique` ON `studies` (`name`);--> statement-breakpoint
CREATE TABLE `user_roles` (
	`user_id` text NOT NULL,
	`role` text NOT NULL,
	PRIMARY KEY(`user_id`, `role`),
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE TABLE `users` (
	`id` text PRIMARY KEY NOT NULL,
	`username` text NOT NULL,
	`display_name` text NOT NULL,
	`password_hash` text NOT NULL,
	`active` integer DEFAULT true NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `users_username_unique` ON `users` (`username`);