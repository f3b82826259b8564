CREATE TABLE `guideline_seen` (
	`user_id` text NOT NULL,
	`scope` text NOT NULL,
	`scope_id` integer NOT NULL,
	`version` integer NOT NULL,
	`seen_at` integer NOT NULL,
	PRIMARY KEY(`user_id`, `scope`, `scope_id`)
);
