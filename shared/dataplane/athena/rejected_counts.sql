/* Per file kind: problems, and distinct rejected rows. */
SELECT
  kind,
  COUNT(*) AS problems,
  COUNT(DISTINCT record) AS rows_rejected
FROM errors
GROUP BY
  kind
