-- One file's problems numbered as an editor shows them: $offset lines before its first record (1 for a
-- CSV header, 0 for JSON Lines, whose records are numbered by line already).
UPDATE errors SET line = record + $offset WHERE kind = $kind
