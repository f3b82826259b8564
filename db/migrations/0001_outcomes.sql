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
CREATE INDEX `case_outcomes_study_idx` ON `case_outcomes` (`study_id`,`status`);