-- The problems SQL decided for the products of `checked`, one row per column with a reason.
INSERT INTO errors
SELECT 'products', record, field, reason, CAST(NULL AS BIGINT)
FROM (
    SELECT record, 'product_id' AS field, product_id_reason AS reason FROM checked WHERE verdict = 'bad'
    UNION ALL SELECT record, 'price', price_reason FROM checked WHERE verdict = 'bad'
) AS problems
WHERE reason IS NOT NULL
