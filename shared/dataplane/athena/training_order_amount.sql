/* training.npz's order_amount: one value per order line, in time order (encode_order_lines.sql). */
SELECT
  order_amount
FROM encoded_lines
ORDER BY
  position
