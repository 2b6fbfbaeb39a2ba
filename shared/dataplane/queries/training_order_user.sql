-- training.npz's order_user: one value per order line, in time order (encode_order_lines.sql).
SELECT order_user FROM encoded_lines ORDER BY position
