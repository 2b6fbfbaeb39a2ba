/* The records of one file with problems found in the engine (not parser-refused lines), in order. */
SELECT DISTINCT
  record
FROM errors
WHERE
  kind = :kind
ORDER BY
  record
