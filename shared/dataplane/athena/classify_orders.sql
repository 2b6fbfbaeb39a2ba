/* Each order line of `raw` checked against OrderRecord (shared/ml/datasets.py) where SQL can decide */
/* it, into `checked`. Per column, a reason: NULL when the cell is one the record model accepts */
/* unchanged, the model's own reason when the cell is one whose reason is known (tests hold these to */
/* the model's, cell by cell), '?' when only the model can say. A row is 'good' when every column is */
/* NULL, 'undecided' when any is '?' (the model validates it), 'bad' otherwise. Good rows carry their */
/* typed values. Identifiers: 1-256 characters with no white space at either end (the model strips). */
CREATE OR REPLACE TABLE checked AS
WITH reasons AS (
  SELECT
    record,
    order_id,
    user_id,
    product_id,
    quantity,
    amount,
    time_value,
    CASE
      WHEN REGEXP_LIKE(order_id, :identifier)
      THEN NULL
      WHEN order_id IS NULL OR REGEXP_LIKE(order_id, '^(?:[ \t]+)$')
      THEN 'is required'
      ELSE '?'
    END AS order_id_reason,
    CASE
      WHEN REGEXP_LIKE(user_id, :identifier)
      THEN NULL
      WHEN user_id IS NULL OR REGEXP_LIKE(user_id, '^(?:[ \t]+)$')
      THEN 'is required'
      ELSE '?'
    END AS user_id_reason,
    CASE
      WHEN REGEXP_LIKE(product_id, :identifier)
      THEN NULL
      WHEN product_id IS NULL OR REGEXP_LIKE(product_id, '^(?:[ \t]+)$')
      THEN 'is required'
      ELSE '?'
    END AS product_id_reason,
    CASE
      WHEN REGEXP_LIKE(quantity, '^(?:[1-9][0-9]{0,4}|100000)$')
      THEN NULL
      WHEN quantity IS NULL OR REGEXP_LIKE(quantity, '^(?:[ \t]+)$')
      THEN 'is required'
      WHEN REGEXP_LIKE(quantity, '^(?:-?[0-9]{1,18})$') AND TRY_CAST(quantity AS BIGINT) < 1
      THEN 'Input should be greater than or equal to 1'
      WHEN REGEXP_LIKE(quantity, '^(?:-?[0-9]{1,18})$')
      AND TRY_CAST(quantity AS BIGINT) > 100000
      THEN 'Input should be less than or equal to 100000'
      WHEN REGEXP_LIKE(quantity, '^(?:[A-Za-z/]+)$')
      THEN 'Input should be a valid integer, unable to parse string as an integer'
      ELSE '?'
    END AS quantity_reason,
    CASE
      WHEN REGEXP_LIKE(amount, '^(?:[0-9]{1,15}(\.[0-9]{1,15})?)$')
      THEN NULL
      WHEN amount IS NULL OR REGEXP_LIKE(amount, '^(?:[ \t]+)$')
      THEN 'is required'
      WHEN REGEXP_LIKE(amount, '^(?:-[0-9]{1,15}(\.[0-9]{1,15})?)$')
      AND TRY_CAST(amount AS DOUBLE) < 0
      THEN 'Input should be greater than or equal to 0'
      WHEN amount IN ('inf', '-inf', 'nan')
      THEN 'Input should be a finite number'
      WHEN REGEXP_LIKE(amount, '^(?:[A-Za-z/]+)$')
      AND NOT LOWER(amount) IN ('inf', 'infinity', 'nan')
      THEN 'Input should be a valid number, unable to parse string as a number'
      ELSE '?'
    END AS amount_reason,
    CASE
      WHEN REGEXP_LIKE("timestamp", :timestamp) AND NOT time_value IS NULL
      THEN NULL
      WHEN "timestamp" IS NULL OR REGEXP_LIKE("timestamp", '^(?:[ \t]+)$')
      THEN 'is required'
      ELSE '?'
    END AS timestamp_reason
  FROM (
    /* The time as the model reads a cell of the accepted shape, computed once for the check and the value. */
    SELECT
      *,
      TRY_CAST(REPLACE(TRIM(TRAILING 'Z' FROM "timestamp"), 'T', ' ') AS TIMESTAMP) AS time_value
    FROM raw
  ) AS cells
)
SELECT
  record,
  CASE
    WHEN COALESCE(
      order_id_reason,
      user_id_reason,
      product_id_reason,
      quantity_reason,
      amount_reason,
      timestamp_reason
    ) IS NULL
    THEN 'good'
    WHEN '?' IN (
      COALESCE(order_id_reason, ''),
      COALESCE(user_id_reason, ''),
      COALESCE(product_id_reason, ''),
      COALESCE(quantity_reason, ''),
      COALESCE(amount_reason, ''),
      COALESCE(timestamp_reason, '')
    )
    THEN 'undecided'
    ELSE 'bad'
  END AS verdict,
  order_id,
  user_id,
  product_id,
  TRY_CAST(quantity AS INTEGER) AS quantity,
  TRY_CAST(amount AS DOUBLE) AS amount,
  time_value AS "timestamp",
  order_id_reason,
  user_id_reason,
  product_id_reason,
  quantity_reason,
  amount_reason,
  timestamp_reason
FROM reasons
