/* The order lines only the record model can judge, with their cells, in file order. */
SELECT
  r.record,
  r.order_id,
  r.user_id,
  r.product_id,
  r.quantity,
  r.amount,
  r."timestamp"
FROM raw AS r
JOIN checked AS c
  ON c.record = r.record
WHERE
  c.verdict = 'undecided'
ORDER BY
  r.record
