/* Products without their rejected rows. */
DELETE FROM products
WHERE
  record IN (
    SELECT
      record
    FROM errors
    WHERE
      kind = 'products'
  )
