-- training.npz's product attributes: id, category (NULL: uncategorised) and price (NULL: unknown), by id.
SELECT product_id, category, price FROM products ORDER BY product_id
