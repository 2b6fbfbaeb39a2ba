/* training.npz's order_units: one value per order line, in time order (encode_order_lines.sql). */
SELECT
  order_units
FROM encoded_lines
ORDER BY
  position
