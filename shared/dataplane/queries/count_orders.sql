-- Good orders rows kept.
SELECT count(*) FROM orders
