-- The rows of batches $first to $last of the upload (normalised.row, JSON text), batch by batch in
-- file order, for the caller to join into each batch's JSON array (joining in the engine, with an
-- ordered string_agg, cost twice as much: measured).
SELECT kept.batch, normalised.row
FROM kept
JOIN normalised ON normalised.pos = kept.pos
WHERE kept.batch BETWEEN $first AND $last AND normalised.pos BETWEEN $first_pos AND $last_pos
ORDER BY kept.pos
