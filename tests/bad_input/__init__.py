"""The bad-input corpus: generated JSONL lines, each with the outcome the job must give it."""
