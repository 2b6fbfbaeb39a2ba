/* The lines of the new orders numbered $start to $stop - 1, by order number, then product, then amount. */
SELECT
  seq,
  product_id,
  quantity,
  amount
FROM event_new_lines
WHERE
  seq >= :start AND seq < :stop
ORDER BY
  seq,
  product_id,
  amount
