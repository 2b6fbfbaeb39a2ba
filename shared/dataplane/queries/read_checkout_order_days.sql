-- The compacted day parts of the hosted checkout's orders (Parquet, written by `checkout_order_day`)
-- into `checkout_order_files`, its columns matched by name (the table declares them once).
INSERT INTO checkout_order_files BY NAME
SELECT *, TRUE AS compacted
FROM read_parquet($parts)
