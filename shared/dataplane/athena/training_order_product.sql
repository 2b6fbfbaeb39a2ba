/* training.npz's order_product: one value per order line, in time order (encode_order_lines.sql). */
SELECT
  order_product
FROM encoded_lines
ORDER BY
  position
