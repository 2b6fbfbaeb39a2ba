-- One product of a dataset version's products.parquet (docs/data-plane.md) for the hosted checkout:
-- its name and price, or no row. product_id is unique in the file (the sync keeps one row per product).
SELECT name, price FROM read_parquet($path) WHERE product_id = $product_id
