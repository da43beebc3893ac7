"""The LUNAR report: personalisation rows, quality figures, privacy, validation and ablation sections."""
