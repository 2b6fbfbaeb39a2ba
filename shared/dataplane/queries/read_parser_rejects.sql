-- The rows the CSV parser refused while loading `raw`: line, error type, byte position and the raw
-- line (the raw line never leaves the sync: the report names lines, columns and reasons only).
SELECT line, error_type, byte_position, csv_line FROM parser_rejects ORDER BY line
