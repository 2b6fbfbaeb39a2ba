/* Every rejected row's problem, as the sync reports it: file name, line, column, reason (never a value), */
/* ordered by file, line and column. */
SELECT
  CASE kind
    WHEN 'customers'
    THEN :customers
    WHEN 'products'
    THEN :products
    ELSE :orders
  END AS file,
  line AS "row",
  field,
  reason
FROM errors
ORDER BY
  file,
  "row",
  field,
  reason
