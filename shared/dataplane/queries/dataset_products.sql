-- products.parquet of a dataset version (docs/data-plane.md): one row per product, by product_id.
SELECT product_id, name, category, price FROM products ORDER BY product_id
