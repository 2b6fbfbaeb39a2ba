/* Lines loaded into `raw_lines`. */
SELECT
  COUNT(*)
FROM raw_lines
