-- Lines loaded into `raw_lines`.
SELECT count(*) FROM raw_lines
