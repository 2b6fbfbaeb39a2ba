-- The lines of a JSON Lines file that hold something, by line number (the record model reads each).
SELECT record, line FROM raw_lines WHERE line IS NOT NULL ORDER BY record
