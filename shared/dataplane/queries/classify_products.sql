-- Each product of `raw` checked against ProductRecord (shared/ml/datasets.py) where SQL can decide
-- it, into `checked` (the scheme of classify_orders.sql).
CREATE OR REPLACE TABLE checked AS
WITH reasons AS (
    SELECT
        *,
        CASE
            WHEN product_id IS NULL OR regexp_matches(product_id, '^(?:[ \t]+)$') THEN 'is required'
            WHEN regexp_matches(product_id, $identifier) THEN NULL
            ELSE '?'
        END AS product_id_reason,
        CASE WHEN name IS NULL OR regexp_matches(name, $identifier) THEN NULL ELSE '?' END AS name_reason,
        CASE
            WHEN category IS NULL OR regexp_matches(category, $identifier) THEN NULL ELSE '?'
        END AS category_reason,
        CASE
            WHEN price IS NULL OR regexp_matches(price, '^(?:[0-9]{1,15}(\.[0-9]{1,15})?)$') THEN NULL
            WHEN regexp_matches(price, '^(?:-[0-9]{1,15}(\.[0-9]{1,15})?)$') AND TRY_CAST(price AS DOUBLE) < 0
                THEN 'Input should be greater than or equal to 0'
            ELSE '?'
        END AS price_reason
    FROM raw
)
SELECT
    record,
    CASE
        WHEN coalesce(product_id_reason, name_reason, category_reason, price_reason) IS NULL THEN 'good'
        WHEN '?' IN (coalesce(product_id_reason, ''), coalesce(name_reason, ''), coalesce(category_reason, ''),
            coalesce(price_reason, '')) THEN 'undecided'
        ELSE 'bad'
    END AS verdict,
    product_id,
    name,
    category,
    TRY_CAST(price AS DOUBLE) AS price,
    product_id_reason,
    price_reason
FROM reasons
