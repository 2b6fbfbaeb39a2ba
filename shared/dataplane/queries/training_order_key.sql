-- training.npz's order_key: one value per order line, in time order (encode_order_lines.sql).
SELECT order_key FROM encoded_lines ORDER BY position
