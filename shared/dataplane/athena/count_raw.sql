/* Records loaded into `raw`. */
SELECT
  COUNT(*)
FROM raw
