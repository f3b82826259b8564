CREATE TABLE `mentat_release_ratings` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`bank_id` integer NOT NULL,
	`question_id` integer NOT NULL,
	`rater` text NOT NULL,
	`wording` text NOT NULL,
	`scores` text NOT NULL,
	`source` text NOT NULL,
	FOREIGN KEY (`bank_id`) REFERENCES `mentat_banks`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`question_id`) REFERENCES `mentat_questions`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `mentat_release_ratings_bank_idx` ON `mentat_release_ratings` (`bank_id`);