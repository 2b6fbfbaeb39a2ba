-- Good products rows kept.
SELECT count(*) FROM products
