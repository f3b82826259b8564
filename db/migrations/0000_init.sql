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
	`created_at` integer DEFAULT 0 NOT NULL,
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
CREATE UNIQUE INDEX `users_username_unique` ON `users` (`username`);--> statement-breakpoint
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
CREATE INDEX `screening_votes_round_idx` ON `screening_votes` (`round_id`,`reviewer_id`);--> statement-breakpoint
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
CREATE UNIQUE INDEX `judge_sets_name_unique` ON `judge_sets` (`name`);--> statement-breakpoint
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
CREATE UNIQUE INDEX `review_sets_name_unique` ON `review_sets` (`name`);