-- Good customers rows kept.
SELECT count(*) FROM customers
