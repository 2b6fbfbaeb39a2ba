/* training.npz's order_day: one value per order line, in time order (encode_order_lines.sql). */
SELECT
  order_day
FROM encoded_lines
ORDER BY
  position
