/* Problems found in one file. */
SELECT
  COUNT(*)
FROM errors
WHERE
  kind = :kind
