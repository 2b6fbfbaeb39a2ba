-- One file's problems by record (or line), column and reason.
SELECT record, field, reason FROM errors WHERE kind = $kind ORDER BY record, field
