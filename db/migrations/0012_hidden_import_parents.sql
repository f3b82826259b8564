ALTER TABLE `screening_studies` ADD `import_run` text;--> statement-breakpoint
ALTER TABLE `mentat_banks` ADD `import_run` text;--> statement-breakpoint
ALTER TABLE `review_sets` ADD `import_run` text;