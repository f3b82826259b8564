CREATE TABLE `evaluation_review_items` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`review_id` integer NOT NULL,
	`trajectory_id` integer NOT NULL,
	`step_index` integer NOT NULL,
	`failures` text NOT NULL,
	FOREIGN KEY (`review_id`) REFERENCES `evaluation_reviews`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`trajectory_id`) REFERENCES `evaluation_trajectories`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `evaluation_review_items_traj_idx` ON `evaluation_review_items` (`review_id`,`trajectory_id`);--> statement-breakpoint
CREATE TABLE `evaluation_review_labels` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`item_id` integer NOT NULL,
	`reviewer_id` text NOT NULL,
	`item_key` text NOT NULL,
	`position` integer NOT NULL,
	`status` text DEFAULT 'not_started' NOT NULL,
	`defensible` text,
	`reason` text DEFAULT '' NOT NULL,
	`version` integer DEFAULT 0 NOT NULL,
	`updated_at` integer,
	`submitted_at` integer,
	FOREIGN KEY (`item_id`) REFERENCES `evaluation_review_items`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`reviewer_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `evaluation_review_labels_item_key_unique` ON `evaluation_review_labels` (`item_key`);--> statement-breakpoint
CREATE UNIQUE INDEX `evaluation_review_labels_item_idx` ON `evaluation_review_labels` (`item_id`,`reviewer_id`);--> statement-breakpoint
CREATE INDEX `evaluation_review_labels_reviewer_idx` ON `evaluation_review_labels` (`reviewer_id`,`position`);--> statement-breakpoint
CREATE TABLE `evaluation_reviews` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`evaluation_id` integer NOT NULL,
	`name` text NOT NULL,
	`filter` text NOT NULL,
	`reviewers_per_item` integer NOT NULL,
	`created_at` integer NOT NULL,
	`created_by` text,
	FOREIGN KEY (`evaluation_id`) REFERENCES `evaluations`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `evaluation_reviews_name_idx` ON `evaluation_reviews` (`evaluation_id`,`name`);