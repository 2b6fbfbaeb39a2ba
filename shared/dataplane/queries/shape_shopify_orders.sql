-- Shopify's orders export into order lines (shared/datasources/shop_exports.py): one row per line item,
-- the order's number as order_id; the customer is the order's e-mail, trimmed and lower-cased (as the
-- customers are keyed) and the order's time is on its first row only, so both are taken from the
-- order's rows; the line's amount is its unit price times its quantity; the time, written
-- "2026-05-01 10:00:00 +0200", becomes UTC ("2026-05-01T08:00:00Z"). A cell that is not a number or
-- such a time is left as it is, for the order line's checks to name.
CREATE OR REPLACE TABLE raw AS
WITH lines AS (
    SELECT
        record,
        order_id,
        lower(trim(coalesce(user_id, max(user_id) OVER (PARTITION BY order_id)))) AS user_id,
        product_id,
        quantity,
        amount,
        coalesce("timestamp", max("timestamp") OVER (PARTITION BY order_id)) AS local_time
    FROM raw
)
SELECT
    record,
    order_id,
    user_id,
    product_id,
    quantity,
    CASE
        WHEN TRY_CAST(amount AS DOUBLE) IS NOT NULL AND TRY_CAST(quantity AS BIGINT) IS NOT NULL
            THEN CAST(round(TRY_CAST(amount AS DOUBLE) * TRY_CAST(quantity AS BIGINT), 2) AS VARCHAR)
        ELSE amount
    END AS amount,
    CASE
        WHEN regexp_full_match(local_time, '[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2} [+-][0-9]{4}')
            THEN strftime(
                strptime(substr(local_time, 1, 19), '%Y-%m-%d %H:%M:%S')
                - INTERVAL (
                    (CASE substr(local_time, 21, 1) WHEN '-' THEN -1 ELSE 1 END)
                    * (CAST(substr(local_time, 22, 2) AS INTEGER) * 60 + CAST(substr(local_time, 24, 2) AS INTEGER))
                ) MINUTE,
                '%Y-%m-%dT%H:%M:%SZ'
            )
        ELSE local_time
    END AS "timestamp"
FROM lines
