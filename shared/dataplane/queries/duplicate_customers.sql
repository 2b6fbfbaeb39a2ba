-- A user_id already given on an earlier good row is a rejected row (the first one stays).
INSERT INTO errors
SELECT 'customers', record, 'user_id', 'duplicate user_id; each must appear once', CAST(NULL AS BIGINT)
FROM (SELECT record, row_number() OVER (PARTITION BY user_id ORDER BY record) AS nth FROM customers) AS numbered
WHERE nth > 1
