/* The problems SQL decided for the order lines of `checked`, one row per column with a reason. */
INSERT INTO errors
SELECT
  'orders',
  record,
  field,
  reason,
  CAST(NULL AS BIGINT)
FROM (
  SELECT
    record,
    'order_id' AS field,
    order_id_reason AS reason
  FROM checked
  WHERE
    verdict = 'bad'
  UNION ALL
  SELECT
    record,
    'user_id',
    user_id_reason
  FROM checked
  WHERE
    verdict = 'bad'
  UNION ALL
  SELECT
    record,
    'product_id',
    product_id_reason
  FROM checked
  WHERE
    verdict = 'bad'
  UNION ALL
  SELECT
    record,
    'quantity',
    quantity_reason
  FROM checked
  WHERE
    verdict = 'bad'
  UNION ALL
  SELECT
    record,
    'amount',
    amount_reason
  FROM checked
  WHERE
    verdict = 'bad'
  UNION ALL
  SELECT
    record,
    'timestamp',
    timestamp_reason
  FROM checked
  WHERE
    verdict = 'bad'
) AS problems
WHERE
  NOT reason IS NULL
