ALTER TABLE `prep_translations` ADD `back_model` text DEFAULT '' NOT NULL;--> statement-breakpoint
ALTER TABLE `prep_translations` ADD `last_error` text;--> statement-breakpoint
ALTER TABLE `prep_translations` ADD `error_count` integer DEFAULT 0 NOT NULL;