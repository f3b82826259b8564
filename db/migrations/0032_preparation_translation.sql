CREATE TABLE `prep_note_quality` (
	`note_id` integer PRIMARY KEY NOT NULL,
	`bleu` real,
	`chrf` real,
	`comet` real,
	`mismatches` text DEFAULT '[]' NOT NULL,
	`needs_correction` integer DEFAULT false NOT NULL,
	`reason` text DEFAULT '' NOT NULL,
	`computed_at` integer NOT NULL,
	FOREIGN KEY (`note_id`) REFERENCES `prep_notes`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `prep_note_quality_needs_idx` ON `prep_note_quality` (`needs_correction`);--> statement-breakpoint
CREATE TABLE `prep_settlements` (
	`note_id` integer PRIMARY KEY NOT NULL,
	`decisions` text NOT NULL,
	`missed` text NOT NULL,
	`excluded` integer DEFAULT false NOT NULL,
	`exclusion_reason` text DEFAULT '' NOT NULL,
	`settled_by` text,
	`settled_at` integer NOT NULL,
	FOREIGN KEY (`note_id`) REFERENCES `prep_notes`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`settled_by`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE TABLE `prep_translations` (
	`note_id` integer NOT NULL,
	`section` integer NOT NULL,
	`source_text` text NOT NULL,
	`translation` text,
	`back_translation` text,
	`model` text DEFAULT '' NOT NULL,
	`translated_at` integer,
	`back_translated_at` integer,
	`bleu` real,
	`chrf` real,
	`comet` real,
	`corrected_text` text,
	`corrected_by` text,
	`corrected_at` integer,
	PRIMARY KEY(`note_id`, `section`),
	FOREIGN KEY (`note_id`) REFERENCES `prep_notes`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`corrected_by`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE no action
);
