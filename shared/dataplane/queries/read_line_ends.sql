-- The line each record of a file ends on, counted by the sync (a file with blank lines or quoted line
-- breaks), into `line_ends`.
CREATE OR REPLACE TABLE line_ends AS
SELECT * FROM read_csv($path, header = true, auto_detect = false, columns = {'record': 'BIGINT', 'line': 'BIGINT'})
