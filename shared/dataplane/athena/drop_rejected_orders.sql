/* Order lines without their rejected rows. */
DELETE FROM orders
WHERE
  record IN (
    SELECT
      record
    FROM errors
    WHERE
      kind = 'orders'
  )
