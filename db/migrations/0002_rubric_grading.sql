CREATE TABLE `grading_batches` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`judge_id` integer NOT NULL,
	`mode` text NOT NULL,
	`status` text NOT NULL,
	`requests` integer NOT NULL,
	`input_path` text,
	`remote_file_id` text,
	`remote_batch_id` text,
	`ingested` integer DEFAULT 0 NOT NULL,
	`dropped` integer DEFAULT 0 NOT NULL,
	`created_at` integer NOT NULL,
	`finished_at` integer,
	FOREIGN KEY (`judge_id`) REFERENCES `grading_models`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE TABLE `grading_call_errors` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`model_id` integer NOT NULL,
	`conversation_id` integer NOT NULL,
	`criterion_idx` integer,
	`error` text NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`model_id`) REFERENCES `grading_models`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`conversation_id`) REFERENCES `grading_conversations`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `grading_call_errors_model_idx` ON `grading_call_errors` (`model_id`);--> statement-breakpoint
CREATE TABLE `grading_conversations` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`set_id` integer NOT NULL,
	`prompt_id` text NOT NULL,
	`position` integer NOT NULL,
	`prompt` text NOT NULL,
	`example_tags` text NOT NULL,
	`content_hash` text NOT NULL,
	FOREIGN KEY (`set_id`) REFERENCES `grading_sets`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `grading_conversations_set_prompt_idx` ON `grading_conversations` (`set_id`,`prompt_id`);--> statement-breakpoint
CREATE INDEX `grading_conversations_set_pos_idx` ON `grading_conversations` (`set_id`,`position`);--> statement-breakpoint
CREATE TABLE `grading_criteria` (
	`conversation_id` integer NOT NULL,
	`idx` integer NOT NULL,
	`criterion` text NOT NULL,
	`points` real NOT NULL,
	`tags` text NOT NULL,
	PRIMARY KEY(`conversation_id`, `idx`),
	FOREIGN KEY (`conversation_id`) REFERENCES `grading_conversations`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE TABLE `grading_models` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`set_id` integer NOT NULL,
	`role` text NOT NULL,
	`name` text NOT NULL,
	`model` text NOT NULL,
	`base_url` text NOT NULL,
	`temperature` real,
	`max_tokens` integer NOT NULL,
	`max_tokens_param` text NOT NULL,
	`self_candidate` text,
	`note` text DEFAULT '' NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`set_id`) REFERENCES `grading_sets`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `grading_models_set_role_name_idx` ON `grading_models` (`set_id`,`role`,`name`);--> statement-breakpoint
CREATE TABLE `grading_responses` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`candidate_id` integer NOT NULL,
	`conversation_id` integer NOT NULL,
	`text` text NOT NULL,
	`finish_reason` text,
	`refusal` integer DEFAULT false NOT NULL,
	`prompt_tokens` integer,
	`completion_tokens` integer,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`candidate_id`) REFERENCES `grading_models`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`conversation_id`) REFERENCES `grading_conversations`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `grading_responses_candidate_conv_idx` ON `grading_responses` (`candidate_id`,`conversation_id`);--> statement-breakpoint
CREATE TABLE `grading_sets` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`name` text NOT NULL,
	`source_sha256` text NOT NULL,
	`content_sha256` text NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `grading_sets_name_unique` ON `grading_sets` (`name`);--> statement-breakpoint
CREATE TABLE `grading_subset_members` (
	`subset_id` integer NOT NULL,
	`conversation_id` integer NOT NULL,
	PRIMARY KEY(`subset_id`, `conversation_id`),
	FOREIGN KEY (`subset_id`) REFERENCES `grading_subsets`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`conversation_id`) REFERENCES `grading_conversations`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE TABLE `grading_subsets` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`set_id` integer NOT NULL,
	`name` text NOT NULL,
	`ids_sha256` text NOT NULL,
	`content_sha256` text NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`set_id`) REFERENCES `grading_sets`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `grading_subsets_set_name_idx` ON `grading_subsets` (`set_id`,`name`);--> statement-breakpoint
CREATE TABLE `grading_verdicts` (
	`judge_id` integer NOT NULL,
	`response_id` integer NOT NULL,
	`criterion_idx` integer NOT NULL,
	`status` text NOT NULL,
	`criteria_met` integer,
	`explanation` text DEFAULT '' NOT NULL,
	`via` text NOT NULL,
	`attempts` integer NOT NULL,
	`error` text,
	`prompt_tokens` integer,
	`completion_tokens` integer,
	`created_at` integer NOT NULL,
	PRIMARY KEY(`judge_id`, `response_id`, `criterion_idx`),
	FOREIGN KEY (`judge_id`) REFERENCES `grading_models`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`response_id`) REFERENCES `grading_responses`(`id`) ON UPDATE no action ON DELETE no action
);
