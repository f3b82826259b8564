CREATE TABLE `work_time` (
	`entity` text NOT NULL,
	`item_id` integer NOT NULL,
	`user_id` text NOT NULL,
	`active_ms` integer DEFAULT 0 NOT NULL,
	`saves` integer DEFAULT 0 NOT NULL,
	`updated_at` integer NOT NULL,
	PRIMARY KEY(`entity`, `item_id`, `user_id`),
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE no action
);
