-- Each order line of `raw` checked against OrderRecord (shared/ml/datasets.py) where SQL can decide
-- it, into `checked`. Per column, a reason: NULL when the cell is one the record model accepts
-- unchanged, the model's own reason when the cell is one whose reason is known (tests hold these to
-- the model's, cell by cell), '?' when only the model can say. A row is 'good' when every column is
-- NULL, 'undecided' when any is '?' (the model validates it), 'bad' otherwise. Good rows carry their
-- typed values. Identifiers: 1-256 characters with no white space at either end (the model strips).
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
            WHEN regexp_matches(order_id, $identifier) THEN NULL
            WHEN order_id IS NULL OR regexp_matches(order_id, '^(?:[ \t]+)$') THEN 'is required'
            ELSE '?'
        END AS order_id_reason,
        CASE
            WHEN regexp_matches(user_id, $identifier) THEN NULL
            WHEN user_id IS NULL OR regexp_matches(user_id, '^(?:[ \t]+)$') THEN 'is required'
            ELSE '?'
        END AS user_id_reason,
        CASE
            WHEN regexp_matches(product_id, $identifier) THEN NULL
            WHEN product_id IS NULL OR regexp_matches(product_id, '^(?:[ \t]+)$') THEN 'is required'
            ELSE '?'
        END AS product_id_reason,
        CASE
            WHEN regexp_matches(quantity, '^(?:[1-9][0-9]{0,4}|100000)$') THEN NULL
            WHEN quantity IS NULL OR regexp_matches(quantity, '^(?:[ \t]+)$') THEN 'is required'
            WHEN regexp_matches(quantity, '^(?:-?[0-9]{1,18})$') AND TRY_CAST(quantity AS BIGINT) < 1
                THEN 'Input should be greater than or equal to 1'
            WHEN regexp_matches(quantity, '^(?:-?[0-9]{1,18})$') AND TRY_CAST(quantity AS BIGINT) > 100000
                THEN 'Input should be less than or equal to 100000'
            WHEN regexp_matches(quantity, '^(?:[A-Za-z/]+)$')
                THEN 'Input should be a valid integer, unable to parse string as an integer'
            ELSE '?'
        END AS quantity_reason,
        CASE
            WHEN regexp_matches(amount, '^(?:[0-9]{1,15}(\.[0-9]{1,15})?)$') THEN NULL
            WHEN amount IS NULL OR regexp_matches(amount, '^(?:[ \t]+)$') THEN 'is required'
            WHEN regexp_matches(amount, '^(?:-[0-9]{1,15}(\.[0-9]{1,15})?)$') AND TRY_CAST(amount AS DOUBLE) < 0
                THEN 'Input should be greater than or equal to 0'
            WHEN amount IN ('inf', '-inf', 'nan') THEN 'Input should be a finite number'
            WHEN regexp_matches(amount, '^(?:[A-Za-z/]+)$') AND lower(amount) NOT IN ('inf', 'infinity', 'nan')
                THEN 'Input should be a valid number, unable to parse string as a number'
            ELSE '?'
        END AS amount_reason,
        CASE
            WHEN regexp_matches("timestamp", $timestamp) AND time_value IS NOT NULL THEN NULL
            WHEN "timestamp" IS NULL OR regexp_matches("timestamp", '^(?:[ \t]+)$') THEN 'is required'
            ELSE '?'
        END AS timestamp_reason
    FROM (
        -- The time as the model reads a cell of the accepted shape, computed once for the check and the value.
        SELECT *, TRY_CAST(replace(rtrim("timestamp", 'Z'), 'T', ' ') AS TIMESTAMP) AS time_value FROM raw
    ) AS cells
)
SELECT
    record,
    CASE
        WHEN coalesce(order_id_reason, user_id_reason, product_id_reason, quantity_reason, amount_reason,
            timestamp_reason) IS NULL THEN 'good'
        WHEN '?' IN (coalesce(order_id_reason, ''), coalesce(user_id_reason, ''), coalesce(product_id_reason, ''),
            coalesce(quantity_reason, ''), coalesce(amount_reason, ''), coalesce(timestamp_reason, ''))
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
