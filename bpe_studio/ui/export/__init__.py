"""Export: a tokenizer's files in every format, with merge statistics and a report."""
