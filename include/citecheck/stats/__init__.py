"""Statistics with no knowledge of the product's tables: ratios that keep their parts, cluster
intervals, deterministic sampling, the step-change tests and calibration arithmetic."""
