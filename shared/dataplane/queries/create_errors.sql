-- Every rejected row's problems: file kind, record (position among the file's records), column, reason
-- and, once numbered, the line an editor shows. Never a value.
CREATE OR REPLACE TABLE errors (kind VARCHAR, record BIGINT, field VARCHAR, reason VARCHAR, line BIGINT)
