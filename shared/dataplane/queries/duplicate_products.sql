-- A product_id already given on an earlier good row is a rejected row (the first one stays).
INSERT INTO errors
SELECT 'products', record, 'product_id', 'duplicate product_id; each must appear once', CAST(NULL AS BIGINT)
FROM (SELECT record, row_number() OVER (PARTITION BY product_id ORDER BY record) AS nth FROM products) AS numbered
WHERE nth > 1
